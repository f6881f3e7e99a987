import { describe, expect, it } from 'vitest';
import { buildUser, hashedEmail, linkedInClickId, normaliseEmail, userInfoOf } from '../../../../src/server/destinations/linkedin/identity';
import { input } from './inputs';

describe('LinkedIn identity', () => {
  it('hashes an email as the SHA-256 hex of the trimmed, lower-cased address', () => {
    expect(hashedEmail('test@example.com')).toBe('973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b');
    expect(hashedEmail('  TEST@Example.COM \n')).toBe('973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b');
    expect(hashedEmail(' Jane.Doe@Example.com ')).toBe('86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d');
  });

  it('keeps the dots and plus tags of an address, as LinkedIn does not strip them', () => {
    expect(normaliseEmail('Jane.Doe+ads@Gmail.com')).toBe('jane.doe+ads@gmail.com');
  });

  it('sends no email id for a value that is not an address', () => {
    expect(hashedEmail('not an email')).toBeNull();
    expect(hashedEmail('')).toBeNull();
    expect(hashedEmail(null)).toBeNull();
  });

  it('takes li_fat_id from the landing click first and from the li_fat_id cookie otherwise', () => {
    expect(linkedInClickId({ clickIds: { li_fat_id: 'from-click' }, cookies: { li_fat_id: 'from-cookie' } })).toBe('from-click');
    expect(linkedInClickId({ clickIds: {}, cookies: { li_fat_id: ' from-cookie ' } })).toBe('from-cookie');
    expect(linkedInClickId({ clickIds: { gclid: 'x' }, cookies: {} })).toBeNull();
  });

  it('adds userInfo only when both the first and the last name are given', () => {
    expect(userInfoOf({ identity: { first_name: ' Jane ', last_name: 'Doe' } })).toEqual({ firstName: 'Jane', lastName: 'Doe' });
    expect(userInfoOf({ identity: { first_name: 'Jane' } })).toBeNull();
    expect(userInfoOf({ identity: { first_name: 'Jane', last_name: '  ' } })).toBeNull();
    // Names longer than the 35 characters userInfo takes are left out, not cut (a cut name would match someone else).
    expect(userInfoOf({ identity: { first_name: 'J'.repeat(35), last_name: 'Doe' } })).toEqual({ firstName: 'J'.repeat(35), lastName: 'Doe' });
    expect(userInfoOf({ identity: { first_name: 'Jane', last_name: 'D'.repeat(36) } })).toBeNull();
    expect(userInfoOf({ identity: { first_name: '名'.repeat(35), last_name: 'Doe' } })).not.toBeNull();
  });

  it('builds the user with the hashed email first and the click id second', () => {
    expect(buildUser(input())).toEqual({
      userIds: [
        { idType: 'SHA256_EMAIL', idValue: '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d' },
        { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'df5gf5-gh6t7-ph4j7h-fgf6n1' },
      ],
      userInfo: { firstName: 'Jane', lastName: 'Doe' },
    });
  });

  it('matches on names alone with an empty userIds when there is neither an email nor a click id', () => {
    expect(buildUser(input({ clickIds: {}, identity: { first_name: 'Jane', last_name: 'Doe' } }))).toEqual({
      userIds: [],
      userInfo: { firstName: 'Jane', lastName: 'Doe' },
    });
    expect(buildUser(input({ clickIds: {}, identity: { first_name: 'Jane' } }))).toBeNull();
  });
});
