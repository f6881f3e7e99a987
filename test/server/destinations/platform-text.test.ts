/**
 * The one cleaner of what ad platforms say (src/server/destinations/platform-text.ts): a platform's words never bring an
 * identity value into a stored error, whatever the platform and whatever path (send, adjustment, connection test,
 * diagnosis), and what is left still says what went wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanPlatform, platformText, REMOVED, sentValues } from '../../../src/server/destinations/platform-text';
import { sha256Hex } from '../../../src/server/destinations/hashing';
import type { AdjustmentInput, DestinationPlatform, SendContext } from '../../../src/server/destinations/destination';
import { platformFor } from '../../../src/server/destinations';
import { loadSettings } from '../../../src/server/settings';
import { deliveryInput } from './delivery-inputs';
import { metaContext, metaInput } from './meta/fixtures';
import { startFakeServer, type FakeServer } from '../../../src/demo/fakes/fake-server';

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

  it("removes the service's developer tokens, sent with every call, and a refresh token rotated during the call", async () => {
    const settings = loadSettings({ CNV_GOOGLE_ADS_DEVELOPER_TOKEN: 'gdev|tok.A1', CNV_MICROSOFT_ADS_DEVELOPER_TOKEN: 'msdev|tok.B2' });
    const credentials: Record<string, string> = { refresh_token: '1//old|rt.C3' };
    const quoting: DestinationPlatform = {
      ...platformFor('microsoft-ads')!,
      testConnection: async () => {
        credentials.refresh_token = '1//new|rt.D4';
        return { ok: false, message: `Refused gdev|tok.A1, msdev|tok.B2, 1//old|rt.C3 and 1//new|rt.D4` };
      },
    };
    const ctx = { settings, connection: { id: 'dst_1', settings: {}, credentials }, accessToken: async () => 'unused' } as unknown as SendContext;
    const said = (await cleanPlatform(quoting).testConnection(ctx)).message;
    expect(said).toBe(`Refused ${REMOVED}, ${REMOVED}, ${REMOVED} and ${REMOVED}`);
  });

  it("removes a call's secrets from the platform's words while other calls start and end around it", async () => {
    // A long run and short parts: the patterns alone would cut the run and leave `|tail.x9Q`, which the second pass
    // (the whole token) no longer finds. Only the call's secrets in scope at its platformText remove it whole.
    const slowToken = `EAAB${'Zq7'.repeat(10)}|tail.x9Q`;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const quoting = (wait: boolean): DestinationPlatform => ({
      ...platformFor('meta')!,
      sendBatch: async (inputs, c) => {
        const token = await c.accessToken();
        if (wait) await gate;
        // The platform's words quoted through platformText, as each adapter's response.ts does.
        return inputs.map(() => ({ kind: 'failed', error: { code: 'x', message: platformText(`Invalid OAuth access token: ${token}`) } }));
      },
    });
    const ctx = (token: string) => ({ connection: { id: 'dst_1', settings: {}, credentials: {} }, accessToken: async () => token }) as unknown as SendContext;
    const slow = cleanPlatform(quoting(true)).sendBatch([input], ctx(slowToken));
    // Another call starts and ends while the first waits for its platform.
    const quick = await cleanPlatform(quoting(false)).sendBatch([input], ctx(`EAAB${'Qk4'.repeat(10)}|quick.q2`));
    expect(JSON.stringify(quick)).not.toMatch(/quick|q2/);
    release();
    const said = JSON.stringify(await slow);
    expect(said).toContain(`Invalid OAuth access token: ${REMOVED}`);
    expect(said).not.toMatch(/tail|x9Q/);
  });

  it("removes the connection's secrets from an error an adapter throws (it becomes the event's adapter_error and a log line)", async () => {
    const pasted = 'EAAB|ab12.cd34-ef56';
    const throwing: DestinationPlatform = {
      ...platformFor('meta')!,
      sendBatch: async () => {
        throw new Error(`Unexpected token 'I', "Invalid token ${pasted}" is not valid JSON`);
      },
      testConnection: async () => {
        throw new TypeError(`cannot read ${pasted}`);
      },
    };
    const withCredentials = { connection: { id: 'dst_1', settings: {}, credentials: { access_token: pasted } }, accessToken: async () => 'unused' } as unknown as SendContext;
    const platform = cleanPlatform(throwing);
    const sent = await platform.sendBatch([input], withCredentials).catch((error: Error) => error);
    expect(sent).toBeInstanceOf(Error);
    expect((sent as Error).message).toBe(`Unexpected token 'I', "Invalid token ${REMOVED}" is not valid JSON`);
    expect((sent as Error).stack).not.toContain('ab12');
    const tested = await platform.testConnection(withCredentials).catch((error: Error) => error);
    expect(tested).toBeInstanceOf(TypeError);
    expect((tested as Error).message).toBe(`cannot read ${REMOVED}`);
  });
});

describe("a platform's own words quoting the connection's token, through the real Meta adapter", () => {
  // A fake Graph API that refuses the token and quotes it back in its message (as an OAuth error may).
  let graph: FakeServer<never>;
  beforeAll(async () => {
    graph = await startFakeServer<never>('echoing Graph API', (request) => ({
      status: 400,
      json: { error: { type: 'OAuthException', code: 190, message: `Invalid OAuth access token - Cannot parse access token: ${String(request.body?.access_token)} (${'x'.repeat(Number(request.query.get('pad') ?? 0))})` } },
    }));
  });
  afterAll(() => graph.close());

  const meta = platformFor('meta')!;
  const said = async (token: string) => JSON.stringify(await meta.sendBatch([metaInput()], metaContext(graph.url, { token })));

  it('removes a token with one long run and short parts after separators (the long run alone was cut, the rest kept)', async () => {
    const token = `EAAB${'Zq7'.repeat(10)}|tail.x9Q`;
    const text = await said(token);
    expect(text).toContain('Cannot parse access token: [removed]');
    expect(text).not.toContain('tail');
    expect(text).not.toContain('x9Q');
  });

  it('removes a token the quote is cut in (cleaned before it is shortened, so no half of it is left)', async () => {
    // Meta's words are kept to 160 characters: the token straddles that end.
    const token = `EAAB|${'ab12.cd34-ef56/'.repeat(10)}`;
    const text = await said(token);
    expect(text).not.toContain('EAAB');
    expect(text).not.toContain('ab12');
    expect(text).not.toContain('cd34');
  });
});
