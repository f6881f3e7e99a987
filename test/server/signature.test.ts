import { describe, expect, it } from 'vitest';
import { computeSignature, generateTestSignatureHeader } from '../../src/protocol/hmac-node';
import { formatSignatureHeader, saasSignupPath, SIGNATURE_TOLERANCE_SECONDS } from '../../src/protocol/webhook';
import { verifySignature, type VerifySignatureInput } from '../../src/server/webhook/signature';

const SECRET = 'whsec_current0000000000000000000000';
const OLD_SECRET = 'whsec_previous000000000000000000000';
const PATH = saasSignupPath('sk_live1', 'signup');
const NOW = 1_800_000_000;
const BODY = JSON.stringify({ correlation_token: 'AAAAAAAAAAAAAAAAAAAAAA', customer_event_id: 'user_1', allow_uncorrelated: false });

function header(opts: { secret?: string; body?: string | Uint8Array; path?: string; timestamp?: number } = {}): string {
  return generateTestSignatureHeader({
    secret: opts.secret ?? SECRET,
    path: opts.path ?? PATH,
    body: opts.body ?? BODY,
    timestamp: opts.timestamp ?? NOW,
  });
}

function verify(overrides: Partial<VerifySignatureInput> = {}) {
  return verifySignature({ rawBody: BODY, header: header(), secrets: [SECRET], path: PATH, nowSeconds: NOW, ...overrides });
}

describe('verifySignature', () => {
  it('accepts a header signed over the exact body, path and timestamp', () => {
    expect(verify()).toEqual({ ok: true, timestamp: NOW, secretIndex: 0 });
  });

  it('accepts the raw body as a Buffer of the same bytes', () => {
    expect(verify({ rawBody: Buffer.from(BODY, 'utf8') }).ok).toBe(true);
  });

  it('signs raw bytes, so a body that is not valid UTF-8 still verifies byte for byte', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(verify({ rawBody: bytes, header: header({ body: bytes }) }).ok).toBe(true);
    // Decoding those bytes to a string (as a careless body parser would) changes them and breaks the signature.
    expect(verify({ rawBody: bytes.toString('utf8'), header: header({ body: bytes }) }).ok).toBe(false);
  });

  it('rejects a tampered body and says to sign the raw body bytes', () => {
    const result = verify({ rawBody: BODY.replace('user_1', 'user_2') });
    expect(result).toMatchObject({ ok: false, code: 'no_signature_match' });
    expect(!result.ok && result.message).toMatch(/raw body bytes exactly as sent/);
  });

  it('rejects a re-serialised body with different whitespace', () => {
    const reserialised = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(verify({ rawBody: reserialised })).toMatchObject({ ok: false, code: 'no_signature_match' });
  });

  it('rejects a re-serialised body with a different key order', () => {
    const { customer_event_id, ...rest } = JSON.parse(BODY) as Record<string, unknown>;
    expect(verify({ rawBody: JSON.stringify({ customer_event_id, ...rest }) })).toMatchObject({ ok: false, code: 'no_signature_match' });
  });

  it('rejects a signature made for another path', () => {
    expect(verify({ header: header({ path: saasSignupPath('sk_live1', 'other') }) })).toMatchObject({
      ok: false,
      code: 'no_signature_match',
    });
  });

  it('ignores a query string on the received path', () => {
    expect(verify({ path: `${PATH}?debug=1` }).ok).toBe(true);
  });

  it('rejects a signature computed over the path with its query string', () => {
    const result = verify({ path: `${PATH}?debug=1`, header: header({ path: `${PATH}?debug=1` }) });
    expect(result).toMatchObject({ ok: false, code: 'no_signature_match' });
    expect(!result.ok && result.message).toMatch(/path without query string/);
  });

  it('compares the path as sent, percent-encoded', () => {
    const encoded = saasSignupPath('site key/é', 'signup');
    expect(encoded).toContain('site%20key%2F%C3%A9');
    expect(verify({ path: encoded, header: header({ path: encoded }) }).ok).toBe(true);
    expect(verify({ path: decodeURIComponent(encoded), header: header({ path: encoded }) }).ok).toBe(false);
  });

  it('rejects a signature with a different secret', () => {
    expect(verify({ header: header({ secret: 'whsec_someoneelse' }) })).toMatchObject({ ok: false, code: 'no_signature_match' });
  });

  it('accepts a timestamp exactly at the tolerance, in the past and in the future', () => {
    for (const t of [NOW - SIGNATURE_TOLERANCE_SECONDS, NOW + SIGNATURE_TOLERANCE_SECONDS]) {
      expect(verify({ header: header({ timestamp: t }) }).ok).toBe(true);
    }
  });

  it('rejects a timestamp more than 300 s old and names the clock', () => {
    const result = verify({ header: header({ timestamp: NOW - SIGNATURE_TOLERANCE_SECONDS - 1 }) });
    expect(result).toMatchObject({ ok: false, code: 'timestamp_outside_tolerance' });
    expect(!result.ok && result.message).toMatch(/check the server clock/);
  });

  it('rejects a timestamp more than 300 s in the future', () => {
    expect(verify({ header: header({ timestamp: NOW + SIGNATURE_TOLERANCE_SECONDS + 1 }) })).toMatchObject({
      ok: false,
      code: 'timestamp_outside_tolerance',
    });
  });

  it('uses a custom tolerance when given', () => {
    expect(verify({ header: header({ timestamp: NOW - 60 }), toleranceSeconds: 30 })).toMatchObject({
      ok: false,
      code: 'timestamp_outside_tolerance',
    });
  });

  it('reports an old forged request as a mismatch, not as a clock problem', () => {
    const forged = header({ secret: 'whsec_wrong', timestamp: NOW - 10_000 });
    expect(verify({ header: forged })).toMatchObject({ ok: false, code: 'no_signature_match' });
  });

  it('accepts any of several v1 values in one header', () => {
    const good = computeSignature(SECRET, NOW, PATH, BODY);
    const other = computeSignature('whsec_unrelated', NOW, PATH, BODY);
    expect(verify({ header: formatSignatureHeader(NOW, [other, good]) }).ok).toBe(true);
    expect(verify({ header: formatSignatureHeader(NOW, [other]) }).ok).toBe(false);
  });

  it('accepts a request signed with the previous secret during a rotation, and says which secret matched', () => {
    const result = verify({ header: header({ secret: OLD_SECRET }), secrets: [SECRET, OLD_SECRET] });
    expect(result).toEqual({ ok: true, timestamp: NOW, secretIndex: 1 });
  });

  it('accepts a header carrying signatures under both the old and the new secret', () => {
    const both = formatSignatureHeader(NOW, [computeSignature(OLD_SECRET, NOW, PATH, BODY), computeSignature(SECRET, NOW, PATH, BODY)]);
    expect(verify({ header: both, secrets: [SECRET] })).toEqual({ ok: true, timestamp: NOW, secretIndex: 0 });
  });

  it('accepts upper-case hex and spaces after the commas', () => {
    const digest = computeSignature(SECRET, NOW, PATH, BODY).toUpperCase();
    expect(verify({ header: `t=${NOW}, v1=${digest}` }).ok).toBe(true);
  });

  it('joins a repeated header (Node gives an array) and checks every value', () => {
    const good = computeSignature(SECRET, NOW, PATH, BODY);
    expect(verify({ header: [`t=${NOW}`, `v1=${good}`] }).ok).toBe(true);
  });

  it('reports a missing header as such', () => {
    for (const missing of [undefined, null, '', '   ']) {
      const result = verify({ header: missing });
      expect(result).toMatchObject({ ok: false, code: 'no_signature_header' });
      expect(!result.ok && result.message).toMatch(/no signature header/i);
    }
  });

  it.each([
    ['garbage', 'nonsense'],
    ['no timestamp', `v1=${'a'.repeat(64)}`],
    ['no v1', `t=${NOW}`],
    ['a non-numeric timestamp', `t=yesterday,v1=${'a'.repeat(64)}`],
    ['a non-hex v1', `t=${NOW},v1=${'z'.repeat(64)}`],
    ['a v1 of the wrong length', `t=${NOW},v1=${'a'.repeat(63)}`],
    ['only another scheme', `t=${NOW},v0=${'a'.repeat(64)}`],
  ])('reports a malformed header: %s', (_name, value) => {
    const result = verify({ header: value });
    expect(result).toMatchObject({ ok: false, code: 'malformed_header' });
    expect(!result.ok && result.message).toMatch(/malformed/i);
  });

  it('fails when no secret is configured', () => {
    expect(verify({ secrets: [] })).toMatchObject({ ok: false, code: 'no_secret' });
  });

  it('throws when handed a parsed body instead of the raw bytes', () => {
    expect(() => verify({ rawBody: JSON.parse(BODY) as unknown as string })).toThrow(/raw request body/);
  });
});
