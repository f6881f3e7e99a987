/**
 * The dashboard's "Test connection" follows post/redirect/get: the post tests and redirects to the Destinations page,
 * which shows the result kept for the session; reloading that page shows it again and sends the platform nothing.
 */
import { describe, expect, it } from 'vitest';
import { createTestService } from './support/harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { startFakeGoogle } from '../../src/demo/fakes/google';
import { googleSettings } from './support/google-connection';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { pressSignIn } from './support/dashboard-sign-in';
import { TestOutcomes, TEST_OUTCOME_TTL_MS } from '../../src/server/dashboard/test-outcomes';

describe('Test connection (post, redirect, get)', () => {
  it('redirects to a page showing the result; a reload shows it again without testing again; another session does not see it', async () => {
    const google = await startFakeGoogle();
    const svc = await createTestService({ CNV_PUBLIC_URL: 'http://cnv.test', ...googleSettings(google) });
    try {
      const destination = await upsertDestination(svc.db, svc.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
        sealCredentials(serviceSecretBox(svc.settings), { refresh_token: google.issueRefreshToken() }));
      const signInAs = async () => {
        const signed = await pressSignIn(svc.app, (await issueSignInLink(svc.db, svc.settings, svc.accountId)).url);
        const cookie = String(signed.headers['set-cookie']).split(';')[0]!;
        const page = await svc.app.inject({ method: 'GET', url: '/dashboard/destinations', headers: { cookie } });
        return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]! };
      };
      const me = await signInAs();
      const tests = () => google.server.requests.filter((r) => r.path === '/v1/events:ingest').length;
      const before = tests();
      const posted = await svc.app.inject({
        method: 'POST', url: `/dashboard/destinations/${destination.id}/test`,
        headers: { cookie: me.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: me.csrf, conversion_id: '987654321' }).toString(),
      });
      expect(posted.statusCode).toBe(303);
      const location = String(posted.headers.location);
      expect(location).toMatch(new RegExp(`^/dashboard/destinations\\?tested=[\\w-]+#${destination.id}$`));
      expect(tests()).toBe(before + 1);

      for (let reload = 0; reload < 2; reload++) {
        const shown = await svc.app.inject({ method: 'GET', url: location, headers: { cookie: me.cookie } });
        expect(shown.statusCode).toBe(200);
        expect(shown.body).toContain('Google Ads: the connection works.');
        expect(shown.body).toMatch(/name="conversion_id"[^>]*value="987654321"/);
      }
      expect(tests()).toBe(before + 1);

      const other = await signInAs();
      const elsewhere = await svc.app.inject({ method: 'GET', url: location, headers: { cookie: other.cookie } });
      expect(elsewhere.statusCode).toBe(200);
      expect(elsewhere.body).not.toContain('the connection works');
      expect(elsewhere.body).toContain('Press Test connection again');
    } finally {
      await svc.close();
      await google.close();
    }
  });

  it('keeps a result for its session for 10 minutes only', () => {
    let now = 1_000_000;
    const kept = new TestOutcomes(() => now);
    const outcome = { destinationId: 'dst_1', ok: true, message: 'fine' };
    const key = kept.keep('session-a', outcome);
    expect(kept.find('session-a', key)).toEqual(outcome);
    expect(kept.find('session-b', key)).toBeUndefined();
    expect(kept.find('session-a', 'other-key')).toBeUndefined();
    now += TEST_OUTCOME_TTL_MS - 1;
    expect(kept.find('session-a', key)).toEqual(outcome);
    now += 1;
    expect(kept.find('session-a', key)).toBeUndefined();
  });
});
