/** The dashboard's Destinations page says a connection's settings in words: Limited Data Use on, or nothing when off. */
import { describe, expect, it } from 'vitest';
import { createTestService } from './support/harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { pressSignIn } from './support/dashboard-sign-in';

describe('a connection on the Destinations page', () => {
  it('shows Limited Data Use on for a connection that chose it, and no such line for one that did not', async () => {
    const svc = await createTestService({ CNV_PUBLIC_URL: 'http://cnv.test' });
    try {
      const sealed = sealCredentials(serviceSecretBox(svc.settings), { access_token: 'EAA'.padEnd(40, 'x') });
      await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456', limited_data_use: true }, sealed);
      await upsertDestination(svc.db, svc.accountId, 'tiktok', { pixel_code: 'C4CNVDEMO0PIXEL0CODE' }, sealed);
      const signed = await pressSignIn(svc.app, (await issueSignInLink(svc.db, svc.settings, svc.accountId)).url);
      const cookie = String(signed.headers['set-cookie']).split(';')[0]!;
      const page = await svc.app.inject({ method: 'GET', url: '/dashboard/destinations', headers: { cookie } });
      expect(page.statusCode).toBe(200);
      const text = page.body.replace(/<[^>]+>/g, '');
      expect(text).toContain('Limited Data Use: on');
      expect(text.match(/Limited Data Use/g)).toHaveLength(1);
      expect(text).not.toContain('limited data use');
    } finally {
      await svc.close();
    }
  });
});
