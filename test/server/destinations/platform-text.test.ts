/**
 * The one cleaner of what ad platforms say (src/server/destinations/platform-text.ts): a platform's words never bring an
 * identity value into a stored error, whatever the platform and whatever path (send, adjustment, connection test,
 * diagnosis), and what is left still says what went wrong.
 */
import { describe, expect, it } from 'vitest';
import { cleanPlatform, platformText, REMOVED, sentValues } from '../../../src/server/destinations/platform-text';
import { sha256Hex } from '../../../src/server/destinations/hashing';
import type { AdjustmentInput, DestinationPlatform, SendContext } from '../../../src/server/destinations/destination';
import { platformFor } from '../../../src/server/destinations';
import { deliveryInput } from './delivery-inputs';

const EMAIL = 'ada.lovelace@example.com';
const HASH = sha256Hex(EMAIL);
const GCLID = 'Cj0KCQiA2eKtBhDcARIsAEGTG41T7xZ_q3mYv9kJr-8Fh2p0sWn5aLd0EALw_wcB';

const input = deliveryInput({
  destination: 'google-ads',
  clickIds: { gclid: 'Cj0Kshort', fbclid: 'IwAR2F4-dbP0l7Mn' },
  cookies: { _fbp: 'fb.1.1596403881668.1116446470' },
  identity: { email: ' Ada.Lovelace@Example.com ', phone: '+44 20 7946 0958', first_name: 'Ada', last_name: 'Lovelace' },
}, { customerId: 'cus_8812' });

describe('platformText', () => {
  it('removes email addresses, SHA-256 hashes and long opaque ids, keeping codes and field paths', () => {
    const said = platformText(`Field /elements/0/user/userIds/0/idValue value ${HASH} of member ${EMAIL} is invalid; INVALID_GCLID ${GCLID}`);
    expect(said).toBe(`Field /elements/0/user/userIds/0/idValue value ${REMOVED} of member ${REMOVED} is invalid; INVALID_GCLID ${REMOVED}`);
  });

  it('keeps long codes and camel-case names readable, and removes tokens, IPv4 addresses, international phone numbers', () => {
    expect(platformText('DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED at events[3].userData.userIdentifiers[0].emailAddress')).toBe(
      'DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED at events[3].userData.userIdentifiers[0].emailAddress',
    );
    expect(platformText('OfflineConversionMicrosoftClickIdNullOrEmpty for customers/1234567890/conversionActions/987654321')).toBe(
      'OfflineConversionMicrosoftClickIdNullOrEmpty for customers/1234567890/conversionActions/987654321',
    );
    expect(platformText(`token EAAB${'x'.repeat(60)} from 203.0.113.7 phone +44 20 7946 0958`)).toBe(`token ${REMOVED} from ${REMOVED} phone ${REMOVED}`);
  });

  it('cleans a long answer in one pass: a 200,000-character run with no @ (once quadratic: minutes) and addresses after it', () => {
    const run = 'a'.repeat(200_000);
    const text = `${run} then ada.lovelace@example.org and x%40y.example ${'b.'.repeat(50_000)}`;
    const cleaned = platformText(text, Number.MAX_SAFE_INTEGER);
    expect(cleaned).not.toContain('lovelace');
    expect(cleaned).toContain(`then ${REMOVED} and ${REMOVED} `);
  });

  it('cleans before it cuts, so half an address is never left behind', () => {
    const said = platformText(`${'a'.repeat(30)} ${EMAIL} ${'b'.repeat(30)}`, 40);
    expect(said).not.toContain('ada.lovelace');
    expect(said).not.toContain('@');
    expect(platformText('user ada.lovelace@exam', 100)).toBe(`user ${REMOVED}`);
  });

  it('removes every value cnv sent for the conversion, in the forms a platform quotes them, any case', () => {
    const sent = sentValues(input);
    const said = platformText(
      'name ADA lovelace, phone 442079460958 (+442079460958), click Cj0Kshort, fbclid IwAR2F4-dbP0l7Mn, fbp fb.1.1596403881668.1116446470, customer cus_8812, agent Mozilla/5.0 (X11; Linux x86_64)',
      1000,
      sent,
    );
    for (const value of ['ada', 'lovelace', '442079460958', 'Cj0Kshort', 'IwAR2F4', '1596403881668', 'cus_8812', 'Mozilla']) {
      expect(said.toLowerCase()).not.toContain(value.toLowerCase());
    }
    expect(said).toContain('name [removed] [removed], phone [removed]');
  });
});

describe('every platform through the registry', () => {
  const ctx = { connection: { id: 'dst_1', settings: {}, credentials: {} }, accessToken: async () => 'unused' } as unknown as SendContext;
  const echo = `value ${HASH} of ${EMAIL}, click Cj0Kshort, name Lovelace`;
  const fake: DestinationPlatform = {
    ...platformFor('google-ads')!,
    sendBatch: async (inputs) => inputs.map(() => ({ kind: 'failed', error: { code: 'rejected', message: `Refused: ${echo}`, hint: `Fix ${EMAIL}` } })),
    adjustBatch: async (inputs) => [
      { kind: 'retry', error: { code: 'x', message: `Later: ${echo}` } },
      ...inputs.slice(1).map(() => ({ kind: 'unsupported' as const, reason: `No: ${echo}` })),
    ],
    testConnection: async () => ({ ok: false, message: `Refused: ${echo}`, error: { code: 'x', message: `Refused: ${echo}` } }),
    diagnose: async () => ({ ok: false, error: { code: 'x', message: `Diagnosis: ${echo}` } }),
  };
  const cleaned = cleanPlatform(fake);
  const leaks = (value: unknown) => {
    const text = JSON.stringify(value).toLowerCase();
    return [EMAIL, HASH, 'cj0kshort', 'lovelace'].filter((secret) => text.includes(secret.toLowerCase()));
  };

  it('cleans conversion sends with the batch’s own values, and keeps the rest of the message', async () => {
    const outcomes = await cleaned.sendBatch([input, deliveryInput({ destination: 'google-ads', clickIds: {}, cookies: {}, identity: {} })], ctx);
    expect(leaks(outcomes)).toEqual([]);
    expect(outcomes[1]).toMatchObject({ kind: 'failed', error: { code: 'rejected', message: 'Refused: value [removed] of [removed], click [removed], name [removed]', hint: 'Fix [removed]' } });
  });

  it('cleans adjustments (their errors and unsupported reasons), connection tests and diagnoses', async () => {
    const adjustment = { original: input } as AdjustmentInput;
    expect(leaks(await cleaned.adjustBatch!([adjustment, adjustment], ctx))).toEqual([]);
    const test = await cleaned.testConnection(ctx);
    expect(test.message).toBe(`Refused: value ${REMOVED} of ${REMOVED}, click Cj0Kshort, name Lovelace`);
    // Nothing of a person was sent in a test or a diagnosis: what identifies anyone is removed all the same.
    expect(JSON.stringify(await cleaned.diagnose!('req', ctx))).not.toMatch(/ada\.lovelace|[0-9a-f]{64}/);
  });

  it("removes the connection's own secrets a platform quotes back (a pasted token, the access token it was sent), even with separators", async () => {
    // Short parts between separators: no single run the patterns would catch as opaque.
    const pasted = 'EAAB|ab12.cd34-ef56';
    const access = 'ya29.a0Af|short.x9';
    const scope = 'https://www.googleapis.com/auth/datamanager';
    const quoting: DestinationPlatform = {
      ...platformFor('google-ads')!,
      sendBatch: async (inputs, c) => {
        const token = await c.accessToken();
        return inputs.map(() => ({ kind: 'failed', error: { code: 'x', message: `Bad token ${token}; pasted ${pasted}; scope ${scope}` } }));
      },
      adjustBatch: async (inputs) => inputs.map(() => ({ kind: 'failed' as const, error: { code: 'x', message: `Bad token ${pasted}` } })),
      testConnection: async (c) => ({ ok: false, message: `Refused ${await c.accessToken()} and ${pasted}`, error: { code: 'x', message: `Refused ${pasted}` } }),
      diagnose: async () => ({ ok: false, error: { code: 'x', message: `Diagnosis of ${pasted}` } }),
    };
    const withCredentials = {
      connection: { id: 'dst_1', settings: {}, credentials: { access_token: pasted, oauth_granted_scope: scope } },
      accessToken: async () => access,
    } as unknown as SendContext;
    const platform = cleanPlatform(quoting);
    const said = JSON.stringify([
      await platform.sendBatch([input], withCredentials),
      await platform.adjustBatch!([{ original: input } as AdjustmentInput], withCredentials),
      await platform.testConnection(withCredentials),
      await platform.diagnose!('req', withCredentials),
    ]);
    expect(said).not.toContain('EAAB');
    expect(said).not.toContain('ab12');
    expect(said).not.toContain('ya29');
    // What a grant covers is not a secret: a message naming the scope keeps it.
    expect(said).toContain(`scope ${scope}`);
  });
});
