import { describe, expect, it } from 'vitest';
import { clickIdFromUetCookie, hashIdentity, microsoftClickId, normalizeEmail, normalizePhone } from '../../../../src/server/destinations/microsoft-ads/identity';
import { CLICK_ID } from './fixtures';

describe('Microsoft Advertising identity rules', () => {
  it("hashes john@contoso.com and +14255551234 to the values of Microsoft's worked example", () => {
    // learn.microsoft.com/en-us/advertising/guides/uet-conversion-api-integration, "Hashed identifiers"
    expect(hashIdentity({ email: 'john@contoso.com', phone: '+14255551234' })).toEqual({
      email: 'ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602',
      phone: 'c59475d96e9f01d7d18d06cfad84dd02333207f02c0c2c5663ef2782cda0390e',
      skipped: [],
    });
  });

  it('normalises an email as Microsoft asks: trim, lower-case, no alias, no dots before the @, no accents, no spaces', () => {
    expect(normalizeEmail('  John@Contoso.com ')).toBe('john@contoso.com');
    expect(normalizeEmail('name+withplus@outlook.com')).toBe('name@outlook.com');
    expect(normalizeEmail('ex.ample@outlook.com')).toBe('example@outlook.com');
    expect(normalizeEmail('Jöhn Doe@contoso.com')).toBe('johndoe@contoso.com');
    expect(normalizeEmail('j.o.h.n+news@Contoso.CO.UK')).toBe('john@contoso.co.uk');
  });

  it('refuses what is not an address: no @, two @, an undotted domain, a domain starting or ending with a period', () => {
    for (const raw of ['john', 'a@b@contoso.com', 'john@localhost', 'john@.contoso.com', 'john@contoso.com.', '+alias@contoso.com', '@contoso.com']) {
      expect(normalizeEmail(raw)).toBeNull();
    }
  });

  it('keeps phone numbers in E.164 and refuses national numbers whose country is unknown', () => {
    expect(normalizePhone('+1 (425) 555-1234')).toBe('+14255551234');
    expect(normalizePhone('+49 30 123456')).toBe('+4930123456');
    expect(normalizePhone('425 555 1234')).toBeNull();
    expect(normalizePhone('+0123456789')).toBeNull();
  });

  it('says which field it left out and why, without the value', () => {
    const hashed = hashIdentity({ email: 'not-an-address', phone: '0170 1234567' });
    expect(hashed.email).toBeNull();
    expect(hashed.phone).toBeNull();
    expect(hashed.skipped).toHaveLength(2);
    expect(hashed.skipped.join(' ')).not.toContain('not-an-address');
    expect(hashed.skipped.join(' ')).not.toContain('1234567');
  });

  it('reads the click id out of the UET cookie, with or without the _uet prefix and the session suffix', () => {
    expect(clickIdFromUetCookie(`_uet${CLICK_ID}`)).toBe(CLICK_ID);
    expect(clickIdFromUetCookie(`${CLICK_ID}-1`)).toBe(CLICK_ID);
    expect(clickIdFromUetCookie(`${CLICK_ID}-0`)).toBe(CLICK_ID);
    expect(clickIdFromUetCookie('N')).toBeNull();
    expect(clickIdFromUetCookie('_uetnonsense')).toBeNull();
    expect(clickIdFromUetCookie(undefined)).toBeNull();
  });

  it("prefers the landing's msclkid over the UET cookie, and falls back to the cookie", () => {
    const other = 'aaaabbbbccccddddeeeeffff00001111';
    expect(microsoftClickId({ clickIds: { msclkid: CLICK_ID }, cookies: { _uetmsclkid: `_uet${other}` } })).toEqual({ clickId: CLICK_ID, source: 'msclkid' });
    expect(microsoftClickId({ clickIds: {}, cookies: { _uetmsclkid: `_uet${other}` } })).toEqual({ clickId: other, source: '_uetmsclkid' });
    expect(microsoftClickId({ clickIds: { gclid: 'x' }, cookies: {} })).toEqual({ clickId: null, source: null });
  });
});
