/**
 * A platform refusing the service's own OAuth client is shown where the account looks: on the destination of GET
 * /v1/destinations (`problem`, naming the operator's settings, never their values) and on the dashboard's Destinations
 * page, which says the service's setup is at fault, not the connection (still `connected`: a reconnect cannot help).
 */
import { describe, expect, it } from 'vitest';
import { createTestService } from './support/harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { oauthClientRefusedError, recordClientRefused, sealCredentials, upsertDestination } from '../../src/server/destinations';
import { pressSignIn } from './support/dashboard-sign-in';

describe("a platform refusing the service's OAuth client, as the account sees it", () => {
  it('is on the destination in the API and on the Destinations page, with the settings the operator must fix', async () => {
    const svc = await createTestService({ CNV_PUBLIC_URL: 'http://cnv.test', CNV_MICROSOFT_OAUTH_CLIENT_ID: 'app-id', CNV_MICROSOFT_OAUTH_CLIENT_SECRET: 'expired-secret-value' });
    try {
      await upsertDestination(svc.db, svc.accountId, 'microsoft-ads', { customer_id: '1', account_id: '2' }, sealCredentials(serviceSecretBox(svc.settings), { refresh_token: 'rt' }));
      const error = oauthClientRefusedError({ type: 'microsoft-ads', label: 'Microsoft Advertising' }, 'invalid_client', 401);
      await recordClientRefused(svc.db, 'microsoft-ads', error, new Date('2026-11-29T10:00:00Z'));

      const listed = (await svc.app.inject({ method: 'GET', url: '/v1/destinations', headers: svc.auth })).json() as { data: Array<Record<string, unknown>> };
      expect(listed.data[0]).toMatchObject({
        type: 'microsoft-ads',
        status: 'connected',
        problem: {
          code: 'oauth_client_refused',
          message: expect.stringMatching(/refused this cnv service's own OAuth client .*the service's operator must\. Conversions that need a new access token through it wait/s),
          hint: expect.stringContaining('CNV_MICROSOFT_OAUTH_CLIENT_SECRET'),
          since: '2026-11-29T10:00:00.000Z',
        },
      });

      const signed = await pressSignIn(svc.app, (await issueSignInLink(svc.db, svc.settings, svc.accountId)).url);
      const cookie = String(signed.headers['set-cookie']).split(';')[0]!;
      const page = await svc.app.inject({ method: 'GET', url: '/dashboard/destinations', headers: { cookie } });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain("Conversions to Microsoft Advertising wait: this cnv service's setup is at fault, not your connection.");
      expect(page.body).toContain('CNV_MICROSOFT_OAUTH_CLIENT_SECRET');
      for (const body of [page.body, JSON.stringify(listed)]) expect(body).not.toContain('expired-secret-value');
    } finally {
      await svc.close();
    }
  });
});
