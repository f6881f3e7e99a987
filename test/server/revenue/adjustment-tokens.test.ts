/**
 * Tokens that heal on the adjustment path, exactly as for conversions (delivery/token-healing.ts), against the strict
 * fakes of Google (Data Manager API restatement) and Microsoft Advertising (ApplyOfflineConversionAdjustments): a
 * refused access token is dropped, refreshed once and the adjustment sent again in the same round; a refused refresh
 * makes the connection `reauthorization_required`, the adjustment waits (queued, never failed, no attempt counted) and
 * is applied after a new handoff, at once when the handoff came while a worker held it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { insertAdjustment } from '../../../src/server/webhook/adjustment-sql';
import { createPlatformAccount, reconnect, reportSignup, type PlatformAccount, type PlatformFake } from '../delivery/platforms';
import { usePlatformWorkers } from '../delivery/platform-workers';
import { TEST_SECRET_KEY, afterTransactionRunning, memoryLog, steppableClock } from '../delivery/fixtures';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { loadSettings } from '../../../src/server/settings';
import type { FakeRequest } from '../../../src/demo/fakes/fake-server';

const PLATFORMS = ['google-ads', 'microsoft-ads'] as const;

/** The requests that carried adjustments: Google's restatement is an events:ingest of the same event, Microsoft's its own call. */
function adjustmentSends(p: PlatformFake, before: number): FakeRequest[] {
  return p.type === 'google-ads' ? p.sends().slice(before) : p.adjustmentSends().slice(before);
}

describe.each(DATABASE_KINDS)('adjustments with tokens that heal on $name', (kind) => {
  const platforms = usePlatformWorkers(kind, PLATFORMS);
  let db: Database;
  beforeAll(() => {
    db = platforms.db;
  });
  const worker = (platform: PlatformFake) => platforms.worker(platform);

  /** A delivered conversion of a connected account, and a restatement of it queued (as the adjustment webhook writes it). */
  async function deliveredThenRestated(p: PlatformFake): Promise<{ acct: PlatformAccount; w: ReturnType<typeof worker>; actionId: string }> {
    const acct = await createPlatformAccount(db, p);
    const w = worker(p);
    const report = await reportSignup(db, acct, p);
    await w.drain();
    const [action] = await db.query<{ status: string }>('select status from event_actions where id = $1', [report.actionId]);
    expect(action!.status).toBe('delivered');
    const recorded = await db.transaction((tx) =>
      insertAdjustment(tx, {
        siteId: acct.site.id, adjustmentId: `adj-${report.customerEventId}`, customerEventId: report.customerEventId,
        type: 'restate', value: 19.5, currency: 'EUR', occurredAt: new Date(),
      }),
    );
    expect(recorded).toEqual({ ok: true, events: 1, inserted: true });
    return { acct, w, actionId: report.actionId };
  }

  async function resultOf(actionId: string) {
    const [row] = await db.query<{ status: string; attempts: number; reason: string | null; error: { code?: string } | null }>(
      'select status, attempts, reason, error from adjustment_results where event_action_id = $1',
      [actionId],
    );
    return row!;
  }

  describe.each(PLATFORMS)('%s', (type) => {
    const platform = () => platforms.fake(type);

    it('refreshes once when the platform refuses the access token, and applies the adjustment in the same round', async () => {
      const p = platform();
      const { w, actionId } = await deliveredThenRestated(p);
      const refreshesBefore = p.refreshes().length;
      const before = type === 'google-ads' ? p.sends().length : p.adjustmentSends().length;
      p.revokeAccessTokens();
      w.clock.advance(1000);
      const results = await w.drain();
      expect(results.filter((r) => r.eventActionId === actionId).map((r) => r.result)).toEqual(['adjusted']);
      expect(p.refreshes().length - refreshesBefore).toBe(1);
      const sends = adjustmentSends(p, before);
      expect(sends.map((r) => r.answeredStatus)).toEqual([401, 200]);
      expect(sends.at(-1)!.problems).toEqual([]);
      expect(await resultOf(actionId)).toMatchObject({ status: 'adjusted', attempts: 1, reason: null });
    });

    it('keeps the adjustment queued when the refresh is refused, and applies it after a new handoff', async () => {
      const p = platform();
      const { acct, w, actionId } = await deliveredThenRestated(p);
      const before = type === 'google-ads' ? p.sends().length : p.adjustmentSends().length;
      p.revokeAccessTokens();
      p.revokeGrant();
      w.clock.advance(1000);
      const results = await w.drain();
      expect(results.filter((r) => r.eventActionId === actionId).map((r) => r.result)).toEqual(['waiting_for_reauthorization']);
      expect(await resultOf(actionId)).toMatchObject({ status: 'queued', attempts: 0, error: { code: 'reauthorization_required' } });
      expect((await resultOf(actionId)).reason).toMatch(/authorized again/);
      const [connection] = await db.query<{ status: string }>('select status from destinations where account_id = $1', [acct.accountId]);
      expect(connection!.status).toBe('reauthorization_required');
      expect(adjustmentSends(p, before).length).toBeLessThanOrEqual(1);

      // While the connection waits, nothing is sent, however long.
      w.clock.advance(60 * 60_000);
      await w.drain();
      expect(adjustmentSends(p, before).length).toBeLessThanOrEqual(1);
      expect((await resultOf(actionId)).status).toBe('queued');

      // A new handoff: the adjustment is due at once and applied.
      expect(await reconnect(db, acct.accountId, p)).toBe(1);
      w.clock.advance(1000);
      const after = await w.drain();
      expect(after.filter((r) => r.eventActionId === actionId).map((r) => r.result)).toEqual(['adjusted']);
      expect(await resultOf(actionId)).toMatchObject({ status: 'adjusted', attempts: 1 });
      expect(adjustmentSends(p, before).at(-1)!.problems).toEqual([]);
    });

    it('applies the adjustment at once when a reconnect lands after the worker marked the connection, before it wrote the wait', async () => {
      const p = platform();
      const { acct, w, actionId } = await deliveredThenRestated(p);
      await w.stop();
      p.revokeAccessTokens();
      p.revokeGrant();
      // Right after the worker marked the connection, the user reconnects; the worker still holds the result.
      let resumed: number | undefined;
      const hooked = afterTransactionRunning(db, "set status = 'reauthorization_required'", async () => {
        resumed = await reconnect(db, acct.accountId, p);
      });
      const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: TEST_SECRET_KEY, ...p.env });
      const worker = startDeliveryWorker({ db: hooked, settings, log: memoryLog(), now: steppableClock(new Date(Date.now() + 120_000)).now, autoStart: false, random: () => 0.5, sendTimeoutMs: 5000 });
      try {
        const results = await worker.drain();
        expect(resumed).toBe(0);
        expect(results.filter((r) => r.eventActionId === actionId).map((r) => r.result)).toEqual(['waiting_for_reauthorization', 'adjusted']);
        expect(await resultOf(actionId)).toMatchObject({ status: 'adjusted', attempts: 1 });
      } finally {
        await worker.stop();
      }
    });
  });
});
