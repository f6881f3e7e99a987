/**
 * The six ad platforms the demo delivers to, as strict local fakes (Google, Meta, Microsoft Advertising, LinkedIn,
 * Reddit, TikTok),
 * and the service settings that send every platform call of this process (OAuth included) to them.
 */
import { loadSettings, PLATFORM_API_BASES, type LocalFake, type Settings } from '../server/settings';
import { startFakeGoogle, type FakeGoogle } from './fakes/google';
import { FAKE_META_PIXEL_ID, FAKE_META_TOKEN, startFakeMeta, type MetaPlan } from './fakes/meta';
import { startFakeMicrosoftAds, type FakeMicrosoftAds } from './fakes/microsoft-ads';
import { startLinkedInFake, type LinkedInFake } from './fakes/linkedin';
import { FAKE_REDDIT_PIXEL, FAKE_REDDIT_TOKEN, startFakeReddit, type FakeReddit } from './fakes/reddit';
import { FAKE_TIKTOK_PIXEL, FAKE_TIKTOK_TOKEN, startFakeTikTok, type FakeTikTok } from './fakes/tiktok';
import type { FakeServer } from './fakes/fake-server';

/**
 * The pretend ad accounts the demo connects, and what its flows fire in each: the signup flow one conversion, the paid
 * plan flow another (a purchase counted as a signup would inflate the signups). The fakes know exactly these.
 */
export const DEMO_ACCOUNTS = {
  google: { customerId: '123-456-7890', conversionActionId: '987654321', paidConversionActionId: '987654322' },
  meta: { pixelId: FAKE_META_PIXEL_ID, accessToken: FAKE_META_TOKEN, eventName: 'CompleteRegistration' },
  microsoft: { customerId: '123456789', accountId: '987654321', goalName: 'Signup', paidGoalName: 'Paid plan' },
  linkedin: { adAccountId: '507404993', conversionRuleId: '104012', paidConversionRuleId: '104013' },
  reddit: { pixelId: FAKE_REDDIT_PIXEL, accessToken: FAKE_REDDIT_TOKEN, eventName: 'SIGN_UP' },
  tiktok: { pixelCode: FAKE_TIKTOK_PIXEL, accessToken: FAKE_TIKTOK_TOKEN, eventName: 'CompleteRegistration' },
} as const;

/**
 * The platforms the demo connects by signing in (OAuth). Their fakes run in this process and keep the grants they
 * issue in memory only, so a refresh token stored at an earlier start is unknown to them (as a revoked one would be to
 * the real platform): the demo signs in to these again on every start.
 */
export const DEMO_SIGN_IN_PLATFORMS: readonly string[] = ['google-ads', 'microsoft-ads', 'linkedin'];

/** The six fakes, running. */
export interface DemoAdPlatforms {
  google: FakeGoogle;
  meta: FakeServer<MetaPlan>;
  microsoft: FakeMicrosoftAds;
  linkedin: LinkedInFake;
  reddit: FakeReddit;
  tiktok: FakeTikTok;
  close(): Promise<void>;
}

/** Starts the six fakes on free loopback ports; `metaApiVersion` is the Graph API version the service calls. */
export async function startDemoAdPlatforms(metaApiVersion: string): Promise<DemoAdPlatforms> {
  const started: Array<{ close(): Promise<void> }> = [];
  const track = <T extends { close(): Promise<void> }>(fake: T): T => (started.push(fake), fake);
  const closeAll = async () => {
    await Promise.allSettled(started.map((fake) => fake.close()));
  };
  try {
    const google = track(
      await startFakeGoogle({
        conversionActions: {
          [DEMO_ACCOUNTS.google.customerId.replaceAll('-', '')]: [DEMO_ACCOUNTS.google.conversionActionId, DEMO_ACCOUNTS.google.paidConversionActionId],
        },
      }),
    );
    const meta = track(
      await startFakeMeta({ accessToken: DEMO_ACCOUNTS.meta.accessToken, pixelIds: [DEMO_ACCOUNTS.meta.pixelId], apiVersion: metaApiVersion }),
    );
    const microsoft = track(
      await startFakeMicrosoftAds({
        customerId: DEMO_ACCOUNTS.microsoft.customerId,
        accountId: DEMO_ACCOUNTS.microsoft.accountId,
        // Created long ago: Microsoft refuses conversions for two hours after a goal is created.
        goals: [
          { name: DEMO_ACCOUNTS.microsoft.goalName, createdAt: new Date(0) },
          { name: DEMO_ACCOUNTS.microsoft.paidGoalName, createdAt: new Date(0) },
        ],
      }),
    );
    const linkedin = track(
      await startLinkedInFake({
        adAccounts: [{ id: DEMO_ACCOUNTS.linkedin.adAccountId, role: 'ACCOUNT_MANAGER' }],
        conversionRules: [
          { id: DEMO_ACCOUNTS.linkedin.conversionRuleId, account: DEMO_ACCOUNTS.linkedin.adAccountId },
          { id: DEMO_ACCOUNTS.linkedin.paidConversionRuleId, account: DEMO_ACCOUNTS.linkedin.adAccountId },
        ],
      }),
    );
    const reddit = track(await startFakeReddit({ accessToken: DEMO_ACCOUNTS.reddit.accessToken, pixelIds: [DEMO_ACCOUNTS.reddit.pixelId] }));
    const tiktok = track(await startFakeTikTok({ accessToken: DEMO_ACCOUNTS.tiktok.accessToken, pixelCodes: [DEMO_ACCOUNTS.tiktok.pixelCode] }));
    return { google, meta, microsoft, linkedin, reddit, tiktok, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The environment (setting names of src/server/settings.ts) that points a service at the fakes. */
export function demoPlatformEnv(fakes: DemoAdPlatforms): Record<string, string> {
  return {
    CNV_GOOGLE_DATA_MANAGER_API_BASE: fakes.google.urls.apiBase,
    CNV_GOOGLE_OAUTH_AUTHORIZE_URL: fakes.google.urls.authorize,
    CNV_GOOGLE_OAUTH_TOKEN_URL: fakes.google.urls.token,
    CNV_GOOGLE_OAUTH_CLIENT_ID: fakes.google.client.id,
    CNV_GOOGLE_OAUTH_CLIENT_SECRET: fakes.google.client.secret,
    CNV_META_GRAPH_API_BASE: fakes.meta.url,
    ...fakes.microsoft.env,
    CNV_LINKEDIN_API_BASE: fakes.linkedin.url,
    CNV_LINKEDIN_OAUTH_AUTHORIZE_URL: fakes.linkedin.authorizeUrl,
    CNV_LINKEDIN_OAUTH_TOKEN_URL: fakes.linkedin.tokenUrl,
    CNV_LINKEDIN_OAUTH_CLIENT_ID: fakes.linkedin.clientId,
    CNV_LINKEDIN_OAUTH_CLIENT_SECRET: fakes.linkedin.clientSecret,
    CNV_REDDIT_API_BASE: fakes.reddit.url,
    CNV_TIKTOK_API_BASE: fakes.tiktok.url,
  };
}

/**
 * What a user types on each hosted connect page (field name → value) to connect the demo's fakes, by destination type:
 * the fakes accept exactly these (and, for Google, Microsoft and LinkedIn, the sign-in to the fake that precedes the
 * form). Microsoft's developer token is not asked for: the demo sets the service's (CNV_MICROSOFT_ADS_DEVELOPER_TOKEN).
 * docs/demo.md lists the same values.
 */
export const DEMO_FORM_VALUES: Readonly<Record<keyof typeof PLATFORM_API_BASES, Readonly<Record<string, string>>>> = {
  'google-ads': { customer_id: DEMO_ACCOUNTS.google.customerId },
  meta: { pixel_id: DEMO_ACCOUNTS.meta.pixelId, access_token: DEMO_ACCOUNTS.meta.accessToken },
  'microsoft-ads': { customer_id: DEMO_ACCOUNTS.microsoft.customerId, account_id: DEMO_ACCOUNTS.microsoft.accountId },
  linkedin: { ad_account_id: DEMO_ACCOUNTS.linkedin.adAccountId },
  reddit: { pixel_id: DEMO_ACCOUNTS.reddit.pixelId, access_token: DEMO_ACCOUNTS.reddit.accessToken },
  tiktok: { pixel_code: DEMO_ACCOUNTS.tiktok.pixelCode, access_token: DEMO_ACCOUNTS.tiktok.accessToken },
};

/**
 * The settings with every platform's API base, OAuth endpoints and OAuth client (and Microsoft's developer token)
 * pointed at the fakes, read through the same setting names as the environment; API versions stay as configured.
 * `localFakes` tells the hosted connect pages the values each fake accepts (shown while the API base is the fake's).
 */
export function settingsForDemoPlatforms(settings: Settings, fakes: DemoAdPlatforms): Settings {
  const faked = loadSettings(demoPlatformEnv(fakes));
  return {
    ...settings,
    google: faked.google,
    meta: { ...settings.meta, graphApiBase: faked.meta.graphApiBase },
    microsoft: faked.microsoft,
    linkedin: { ...faked.linkedin, apiVersion: settings.linkedin.apiVersion },
    reddit: faked.reddit,
    tiktok: faked.tiktok,
    localFakes: Object.fromEntries(
      (Object.keys(DEMO_FORM_VALUES) as (keyof typeof PLATFORM_API_BASES)[]).map((type): [string, LocalFake] => [
        type,
        { apiBase: PLATFORM_API_BASES[type].of(faked), formValues: DEMO_FORM_VALUES[type] },
      ]),
    ),
  };
}
