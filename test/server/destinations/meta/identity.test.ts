import { describe, expect, it } from 'vitest';
import {
  buildFbc,
  fbpFromCookies,
  hashIdentityForMeta,
  normalizeEmail,
  normalizeName,
  normalizePhone,
} from '../../../../src/server/destinations/meta/identity';
import { sha256Hex } from '../../../../src/server/destinations/hashing';

// Vectors from Meta's customer information parameters page:
// https://developers.facebook.com/documentation/ads-commerce/conversions-api/parameters/customer-information-parameters
describe("Meta's normalisation, with the vectors of Meta's own page", () => {
  it('lower-cases and trims an email, and hashes it to the value Meta publishes', () => {
    expect(normalizeEmail('  John_Smith@gmail.com ')).toBe('john_smith@gmail.com');
    expect(hashIdentityForMeta({ email: 'John_Smith@gmail.com' }).em).toBe(
      '62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f',
    );
  });

  it('keeps the dots and plus suffix of a gmail address, unlike Google', () => {
    expect(normalizeEmail('Jo.Hn+ads@Gmail.com')).toBe('jo.hn+ads@gmail.com');
  });

  it('turns a phone with its country code into digits only and hashes it to the value Meta publishes', () => {
    expect(normalizePhone('+1 (650) 555-1212')).toBe('16505551212');
    expect(hashIdentityForMeta({ phone: '+1 (650) 555-1212' }).ph).toBe(
      'e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176',
    );
  });

  it('reads the international 00 prefix as the start of the country code', () => {
    expect(normalizePhone('0044 20 7946 0958')).toBe('442079460958');
  });

  it('skips a national number rather than guess its country', () => {
    expect(normalizePhone('(650) 555-1212')).toBeNull();
    const hashed = hashIdentityForMeta({ phone: '(650) 555-1212' });
    expect(hashed.ph).toBeNull();
    expect(hashed.skipped).toEqual([expect.stringContaining('phone skipped')]);
    expect(hashed.skipped.join(' ')).not.toContain('650');
  });

  it('lower-cases names and hashes them to the values Meta publishes, accents and Hangul kept', () => {
    expect(hashIdentityForMeta({ first_name: 'Mary' }).fn).toBe('6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec');
    expect(hashIdentityForMeta({ first_name: '정' }).fn).toBe('8fa8cd9c440be61d0151429310034083132b35975c4bea67fdd74158eb51db14');
    expect(hashIdentityForMeta({ last_name: 'Valéry' }).ln).toBe('08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c');
  });

  it('removes punctuation and spaces from names, a typographic apostrophe included', () => {
    expect(normalizeName("O'Neil")).toBe('oneil');
    expect(normalizeName('O’Neil')).toBe('oneil');
    expect(normalizeName(' Mary-Ann ')).toBe('maryann');
  });

  it('hashes a decomposed accent like a composed one', () => {
    expect(normalizeName('Vale\u0301ry')).toBe('valéry');
  });

  it('leaves absent and empty fields out without a note', () => {
    expect(hashIdentityForMeta({ email: null, phone: '  ' })).toEqual({ em: null, ph: null, fn: null, ln: null, skipped: [] });
  });

  it('skips a malformed email with a note that does not repeat it', () => {
    const hashed = hashIdentityForMeta({ email: 'not-an-email' });
    expect(hashed.em).toBeNull();
    expect(hashed.skipped).toEqual(['email skipped: not an email address']);
  });
});

describe('fbc and fbp', () => {
  const seen = new Date('2026-11-20T08:00:00.123Z');

  it('passes the _fbc cookie on unmodified, alone or holding the same click as the fbclid (appendix kept)', () => {
    const cookie = 'fb.1.1554763741205.AbCdEfGhIjKlMnOpQrStUvWxYz1234567890';
    expect(buildFbc({ _fbc: cookie }, {}, seen)).toEqual({ value: cookie, source: 'cookie' });
    expect(buildFbc({ _fbc: cookie }, { fbclid: 'AbCdEfGhIjKlMnOpQrStUvWxYz1234567890' }, seen)).toEqual({ value: cookie, source: 'cookie' });
    const withAppendix = `${cookie}.AQEAAQMB`;
    expect(buildFbc({ _fbc: withAppendix }, { fbclid: 'AbCdEfGhIjKlMnOpQrStUvWxYz1234567890' }, seen)).toEqual({ value: withAppendix, source: 'cookie' });
  });

  it('sends the newer of two different clicks: a newer fbclid over an older cookie, a newer cookie over an older fbclid', () => {
    const older = `fb.1.${seen.getTime() - 86_400_000}.OldClick`;
    expect(buildFbc({ _fbc: older }, { fbclid: 'NewClick' }, seen)).toEqual({ value: `fb.1.${seen.getTime()}.NewClick`, source: 'fbclid' });
    const newer = `fb.1.${seen.getTime() + 86_400_000}.NewerClick`;
    expect(buildFbc({ _fbc: newer }, { fbclid: 'NewClick' }, seen)).toEqual({ value: newer, source: 'cookie' });
    // A creation time written in seconds by hand-written code is read as seconds.
    const olderInSeconds = `fb.1.${Math.floor(seen.getTime() / 1000) - 60}.OldClick`;
    expect(buildFbc({ _fbc: olderInSeconds }, { fbclid: 'NewClick' }, seen)?.source).toBe('fbclid');
  });

  it('builds fbc from the landing fbclid with the capture time in milliseconds and the case kept', () => {
    expect(buildFbc({}, { fbclid: 'IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk' }, seen)).toEqual({
      value: `fb.1.${seen.getTime()}.IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk`,
      source: 'fbclid',
    });
  });

  it('ignores a malformed _fbc cookie and falls back to the fbclid', () => {
    expect(buildFbc({ _fbc: 'garbage' }, { fbclid: 'AbC' }, seen)?.value).toBe(`fb.1.${seen.getTime()}.AbC`);
  });

  it('has no fbc without a cookie or an fbclid', () => {
    expect(buildFbc({}, { gclid: 'x' }, seen)).toBeNull();
  });

  it('takes fbp only from a well-formed _fbp cookie', () => {
    expect(fbpFromCookies({ _fbp: 'fb.1.1596403881668.1116446470' })).toBe('fb.1.1596403881668.1116446470');
    expect(fbpFromCookies({ _fbp: '1116446470' })).toBeNull();
    expect(fbpFromCookies({})).toBeNull();
  });

  it('hashes with lower-case hex SHA-256', () => {
    expect(sha256Hex('mary')).toMatch(/^[0-9a-f]{64}$/);
  });
});
