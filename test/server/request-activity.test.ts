/**
 * Which requests count as somebody waiting on the store (http/request-activity.ts): every request but a health check,
 * on every listener, whatever its answer. The embedded store's maintenance waits for a quiet moment before a long
 * vacuum (store-maintenance.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app';
import type { Database } from '../../src/server/db/db';
import { loadSettings } from '../../src/server/settings';
import { HEALTH_PATH } from '../../src/server/health/routes';
import { markRequest, requestsQuietFor } from '../../src/server/http/request-activity';
import { openMigratedPglite } from '../support/pglite';

describe('requests that count as somebody waiting on the store', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openMigratedPglite();
  });
  afterAll(() => db.close());

  it('is quiet before any request, and again once the quiet time has passed', async () => {
    const other = await openMigratedPglite();
    try {
      expect(requestsQuietFor(other, 2_000)).toBe(true);
      markRequest(other, 10_000);
      expect(requestsQuietFor(other, 2_000, 11_999)).toBe(false);
      expect(requestsQuietFor(other, 2_000, 12_000)).toBe(true);
      expect(requestsQuietFor(db, 2_000, 11_000)).toBe(true); // per store: another store's requests do not count
    } finally {
      await other.close();
    }
  });

  it('counts every request but a health check, on the full app and the webhook-only one, whatever the answer', async () => {
    for (const surfaces of [undefined, ['webhook' as const]]) {
      const app = await buildApp({ db, settings: loadSettings({ CNV_DEMO_PORT: 'off' }), ...(surfaces ? { surfaces } : {}) });
      try {
        const quietSince = async (method: 'GET' | 'HEAD' | 'POST', url: string) => {
          const before = performance.now();
          await app.inject({ method, url });
          // Quiet for the time since just before the request: only if the request did not count. Asked as of the same
          // instant the window is measured to (a pause between two readings of the clock must not close the window).
          const after = performance.now();
          return requestsQuietFor(db, after - before + 1, after);
        };
        markRequest(db, -1e9); // long ago
        expect(await quietSince('GET', HEALTH_PATH)).toBe(true);
        expect(await quietSince('HEAD', HEALTH_PATH)).toBe(true);
        expect(await quietSince('GET', `${HEALTH_PATH}?probe=lb`)).toBe(true);
        expect(await quietSince('GET', `${HEALTH_PATH}x`)).toBe(false); // not the health check: a 404 somebody waited for
        expect(await quietSince('GET', '/v1/sites')).toBe(false); // a 401 (no key), or a 404 on the webhook-only app
        expect(await quietSince('POST', '/api/webhook-bridge/saas-signup/nokey/signup')).toBe(false);
      } finally {
        await app.close();
      }
    }
  });
});
