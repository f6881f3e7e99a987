/**
 * An ad platform's error that quotes what it was sent (an email, its SHA-256, the click id, the phone: Google's field
 * violations, LinkedIn's Rest.li validation errors and the like) never brings them into what cnv keeps or passes on:
 * the event action's stored error (GET /v1/events/{id}), the "delivery failed" log line, and the `event.failed`
 * notification. The same on every platform, each against its strict fake; the rest of the message still says what
 * went wrong.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { sha256Hex } from '../../../src/server/destinations/hashing';
import { insertEndpoint } from '../../../src/server/notifications/sql';
import { startDeliveryWorker, type DeliveryWorker } from '../../../src/server/delivery/worker';
import { loadSettings } from '../../../src/server/settings';
import { FAKE_REDDIT_PIXEL, FAKE_REDDIT_TOKEN, startFakeReddit } from '../../../src/demo/fakes/reddit';
import { FAKE_TIKTOK_PIXEL, FAKE_TIKTOK_TOKEN, startFakeTikTok } from '../../../src/demo/fakes/tiktok';
import { startFakeGoogle } from '../../../src/demo/fakes/google';
import { FAKE_META_TOKEN, startFakeMeta } from '../../../src/demo/fakes/meta';
import { startFakeMicrosoftAds } from '../../../src/demo/fakes/microsoft-ads';
import { startLinkedInFake } from '../../../src/demo/fakes/linkedin';
import { TEST_SECRET_KEY, memoryLog, readOutcome, steppableClock } from './fixtures';
import { createPlatformAccount, reportSignup, type PlatformSetup } from './platforms';

/** What reportSignup sends: the email as platforms normalise it, its hash, and the phone in E.164. */
const EMAIL = 'jane.doe@example.com';
const HASH = sha256Hex(EMAIL);
const PHONE = '+18005550102';

/** One platform as this test drives it: its setup, and its fake told to refuse the next send quoting `echo`. */
interface Echoing extends PlatformSetup {
  env: Record<string, string>;
  /** The click id sent (the platform's own), which the platform quotes back. */
  clickId: string;
  refuseQuoting(echo: string): void;
  /** What the stored message must still say (a code, a field path, the platform's name). */
  useful: RegExp;
  close(): Promise<void>;
}

/** Starts a platform's fake and says how it refuses a send with a message that quotes `echo`. */
async function startEchoing(type: string): Promise<Echoing> {
  switch (type) {
    case 'google-ads': {
      const google = await startFakeGoogle();
      const clickId = 'Cj0KCQtestGCLID';
      return {
        type,
        env: {
          CNV_GOOGLE_DATA_MANAGER_API_BASE: google.urls.apiBase, CNV_GOOGLE_OAUTH_AUTHORIZE_URL: google.urls.authorize, CNV_GOOGLE_OAUTH_TOKEN_URL: google.urls.token,
          CNV_GOOGLE_OAUTH_CLIENT_ID: google.client.id, CNV_GOOGLE_OAUTH_CLIENT_SECRET: google.client.secret,
        },
        settings: { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' }, newCredentials: () => ({ refresh_token: google.issueRefreshToken() }),
        actionConfig: { conversion: { id: '987654321' } }, clickIds: { gclid: clickId }, cookies: {},
        clickId,
        close: () => google.close(),
        // Google names the event and the field, and its description quotes the value (google.rpc.BadRequest).
        refuseQuoting: (echo) => google.server.respondWith({ kind: 'eventError', field: 'adIdentifiers.gclid', reason: `INVALID_GCLID ${echo}` }),
        useful: /Google refused the conversion as invalid\. Google said: adIdentifiers\.gclid: planned INVALID_GCLID/,
      };
    }
    case 'meta': {
      const meta = await startFakeMeta({ accessToken: FAKE_META_TOKEN });
      const clickId = 'IwAR2F4-dbP0l7Mn';
      return {
        type, env: { CNV_META_GRAPH_API_BASE: meta.url },
        settings: { pixel_id: '1234567890123456' }, newCredentials: () => ({ access_token: FAKE_META_TOKEN }),
        actionConfig: {}, clickIds: { fbclid: clickId }, cookies: { _fbp: 'fb.1.1596403881668.1116446470' },
        clickId,
        close: () => meta.close(),
        refuseQuoting: (echo) => meta.respondWith({ kind: 'invalid_parameter', title: `Invalid parameter: ${echo}` }),
        useful: /Meta answered error 100\/2804003 \(Invalid parameter: .*\): Meta refused the event\./,
      };
    }
    case 'microsoft-ads': {
      const microsoft = await startFakeMicrosoftAds({ goals: [{ name: 'Signup', createdAt: new Date(Date.now() - 3 * 86_400_000) }] });
      const clickId = '2f1a6b1c9e3d4c5ba0f1e2d3c4b5a697';
      return {
        type, env: microsoft.env,
        settings: { customer_id: microsoft.customerId, account_id: microsoft.accountId }, newCredentials: () => ({ refresh_token: microsoft.issueRefreshToken() }),
        actionConfig: { conversion_name: 'Signup' }, clickIds: { msclkid: clickId }, cookies: {},
        clickId,
        close: () => microsoft.close(),
        refuseQuoting: (echo) => microsoft.respondWith({ kind: 'fault', status: 400, code: 9999, errorCode: `InvalidOfflineConversion ${echo}` }),
        useful: /Microsoft Advertising refused the conversion: InvalidOfflineConversion .*\(code 9999\)/,
      };
    }
    case 'linkedin': {
      const linkedin = await startLinkedInFake();
      const clickId = 'df5gf5-gh6t7-ph4j7h-fgf6n1';
      return {
        type,
        env: {
          CNV_LINKEDIN_API_BASE: linkedin.url, CNV_LINKEDIN_OAUTH_AUTHORIZE_URL: linkedin.authorizeUrl, CNV_LINKEDIN_OAUTH_TOKEN_URL: linkedin.tokenUrl,
          CNV_LINKEDIN_OAUTH_CLIENT_ID: linkedin.clientId, CNV_LINKEDIN_OAUTH_CLIENT_SECRET: linkedin.clientSecret,
        },
        settings: { ad_account_id: '507404993', ad_account_urn: 'urn:li:sponsoredAccount:507404993' }, newCredentials: () => ({ refresh_token: linkedin.issueRefreshToken() }),
        actionConfig: { conversion_rule: '104012' }, clickIds: { li_fat_id: clickId }, cookies: {},
        clickId,
        close: () => linkedin.close(),
        refuseQuoting: (echo) => linkedin.respondWith({ kind: 'http', status: 400, code: 'INVALID_VALUE', message: `Field /elements/0/user/userIds/0/idValue value ${echo} is invalid` }),
        useful: /^Field \/elements\/0\/user\/userIds\/0\/idValue value .* is invalid$/,
      };
    }
    case 'reddit': {
      const reddit = await startFakeReddit();
      const clickId = '3184742045291800001';
      return {
        type, env: { CNV_REDDIT_API_BASE: reddit.url },
        settings: { pixel_id: FAKE_REDDIT_PIXEL }, newCredentials: () => ({ access_token: FAKE_REDDIT_TOKEN }),
        actionConfig: {}, clickIds: { rdt_cid: clickId }, cookies: { _rdt_uuid: '1677712978045.b8f7eb7d-b357-437b-8bd3-000000000001' },
        clickId,
        refuseQuoting: (echo) => reddit.respondWith({ kind: 'invalid_event', message: `Invalid conversion event: ${echo}` }),
        useful: /Reddit answered HTTP 400 \(Invalid conversion event: .*\): Reddit refused the event\./,
        close: () => reddit.close(),
      };
    }
    case 'tiktok': {
      const tiktok = await startFakeTikTok();
      const clickId = 'E.C.P.v3cnvEchoTestClick';
      return {
        type, env: { CNV_TIKTOK_API_BASE: tiktok.url },
        settings: { pixel_code: FAKE_TIKTOK_PIXEL }, newCredentials: () => ({ access_token: FAKE_TIKTOK_TOKEN }),
        actionConfig: { event_name: 'CompleteRegistration' }, clickIds: { ttclid: clickId }, cookies: { _ttp: 'ttp-echo-cookie' },
        clickId,
        refuseQuoting: (echo) => tiktok.respondWith({ kind: 'invalid_parameter', message: `Invalid parameters: ${echo}` }),
        useful: /TikTok answered code 40002 \(Invalid parameters: .*\): TikTok refused the event\./,
        close: () => tiktok.close(),
      };
    }
  }
  throw new Error(`no echoing fake for ${type}`);
}

const TYPES = ['google-ads', 'meta', 'microsoft-ads', 'linkedin', 'reddit', 'tiktok'] as const;

describe.each(DATABASE_KINDS)('a platform quoting what it was sent, on $name', (kind) => {
  let db: Database;
  const workers: DeliveryWorker[] = [];
  const platforms = new Map<string, Echoing>();

  beforeAll(async () => {
    db = await kind.open();
    for (const type of TYPES) platforms.set(type, await startEchoing(type));
  });
  afterAll(async () => {
    await Promise.all([db?.close(), ...[...platforms.values()].map((p) => p.close())]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  it.each(TYPES)('%s: the stored error, the log line and the notification hold none of it', async (type) => {
    const p = platforms.get(type)!;
    const log = memoryLog();
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...p.env });
    const w = startDeliveryWorker({ db, settings, log, now: clock.now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
    workers.push(w);
    const acct = await createPlatformAccount(db, p);
    await insertEndpoint(db, acct.accountId, 'https://hooks.example/cnv', ['event.failed'], 'sealed-secret-unused');

    // A first conversion goes through (the access token is fetched), so the planned refusal meets the send itself.
    const first = await reportSignup(db, acct, p);
    await w.drain();
    expect((await readOutcome(db, first.eventId)).actions[0]!.status).toBe('delivered');

    const quoted = [EMAIL, HASH, p.clickId, PHONE];
    p.refuseQuoting(`email ${EMAIL} hash ${HASH} click ${p.clickId} phone ${PHONE}`);
    const { eventId } = await reportSignup(db, acct, p);
    clock.advance(1000);
    await w.drain();

    const { actions } = await readOutcome(db, eventId);
    expect(actions[0]).toMatchObject({ status: 'failed' });
    const error = actions[0]!.error!;
    expect(error.message).toMatch(p.useful);
    expect(error.message).toContain('[removed]');
    const logged = log.lines.filter((l) => l.msg === 'delivery failed' && (l.obj as { eventId?: string }).eventId === eventId);
    expect(logged).toHaveLength(1);
    const notified = await db.query<{ payload: { data: { reason: string } } }>(
      `select payload from notifications where account_id = $1 and kind = 'event.failed'`,
      [acct.accountId],
    );
    expect(notified).toHaveLength(1);
    expect(notified[0]!.payload.data.reason).toContain(error.message);

    for (const [where, kept] of [['stored error', error], ['log line', logged], ['notification', notified]] as const) {
      const text = JSON.stringify(kept).toLowerCase();
      for (const value of quoted) expect(text, `${where} of ${type} quotes ${value}`).not.toContain(value.toLowerCase());
    }
  });
});
