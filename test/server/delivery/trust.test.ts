/**
 * Delivery you can trust, the same on every platform, against each platform's strict fake: a refused access token is
 * dropped, refreshed once and the conversion sent again; a refused refresh makes the connection
 * `reauthorization_required` and its conversions wait (queued, never failed) until a new handoff, then they go;
 * `ad_user_data: denied` sends no user identifier anywhere (the action is `skipped`, the event never `failed`);
 * dedup ids come from the report's customer_event_id and stay the same across resends.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { readOutcome } from './fixtures';
import { createPlatformAccount, reconnect, reportSignup, type PlatformAccount, type PlatformFake } from './platforms';
import { usePlatformWorkers } from './platform-workers';

const PLATFORMS = ['google-ads', 'meta', 'microsoft-ads', 'linkedin'] as const;

describe.each(DATABASE_KINDS)('delivery you can trust on $name', (kind) => {
  const platforms = usePlatformWorkers(kind, PLATFORMS);
  let db: Database;
  beforeAll(() => {
    db = platforms.db;
  });

  /** A worker for the platform (see usePlatformWorkers), with `drainFor` for the rows of given events. */
  function worker(platform: PlatformFake) {
    const w = platforms.worker(platform);
    /** Drains, and gives the results of the rows of these events' actions (other tests' rows share the database). */
    const drainFor = async (...events: { actionId: string }[]) => {
      const results = await w.drain();
      return events.map((e) => results.find((r) => r.eventActionId === e.actionId)?.result ?? 'not_claimed');
    };
    return Object.assign(w, { drainFor });
  }

  /** An account connected to the platform, whose worker already holds an access token (one conversion delivered). */
  async function warmed(platform: PlatformFake): Promise<{ acct: PlatformAccount; w: ReturnType<typeof worker> }> {
    const acct = await createPlatformAccount(db, platform);
    const w = worker(platform);
    expect(await w.drainFor(await reportSignup(db, acct, platform))).toEqual(['delivered']);
    return { acct, w };
  }

  describe.each(PLATFORMS)('%s', (type) => {
    const platform = () => platforms.fake(type);

    it('refreshes once when the platform refuses the access token, and delivers the conversion in the same round', async () => {
      const p = platform();
      if (!p.oauth) return; // Meta's system-user token has no refresh: see the next test
      const { acct, w } = await warmed(p);
      const sendsBefore = p.sends().length;
      const refreshesBefore = p.refreshes().length;
      p.revokeAccessTokens();
      const report = await reportSignup(db, acct, p);
      const { eventId } = report;
      w.clock.advance(1000);
      expect(await w.drainFor(report)).toEqual(['delivered']);
      expect(p.refreshes().length - refreshesBefore).toBe(1);
      const sends = p.sends().slice(sendsBefore);
      expect(sends.map((r) => r.answeredStatus)).toEqual([401, 200]);
      expect(sends.at(-1)!.problems).toEqual([]);
      const { event, actions } = await readOutcome(db, eventId);
      expect(event.status).toBe('completed');
      expect(actions[0]).toMatchObject({ status: 'delivered', attempts: 1, error: null });
      const [connection] = await db.query<{ status: string }>('select status from destinations where account_id = $1', [acct.accountId]);
      expect(connection!.status).toBe('connected');
    });

    it('keeps conversions queued when the platform refuses the grant, and delivers them after a new handoff', async () => {
      const p = platform();
      const { acct, w } = await warmed(p);
      p.revokeAccessTokens();
      p.revokeGrant();
      const sendsBefore = p.sends().length;
      const first = await reportSignup(db, acct, p);
      const second = await reportSignup(db, acct, p);
      w.clock.advance(1000);
      expect(await w.drainFor(first, second)).toEqual(['waiting_for_reauthorization', 'waiting_for_reauthorization']);
      for (const { eventId } of [first, second]) {
        const { event, actions } = await readOutcome(db, eventId);
        expect(event.status).toBe('queued');
        expect(actions[0]).toMatchObject({ status: 'queued', attempts: 0, error: { code: 'reauthorization_required', retrying: true } });
      }
      const [connection] = await db.query<{ status: string }>('select status from destinations where account_id = $1', [acct.accountId]);
      expect(connection!.status).toBe('reauthorization_required');
      // One refused send at most (the refused token), never a send per conversion again and again.
      expect(p.sends().length - sendsBefore).toBeLessThanOrEqual(1);

      // Waiting rows are not sent while the connection waits.
      w.clock.advance(60 * 60_000);
      await w.drain();
      expect(p.sends().length - sendsBefore).toBeLessThanOrEqual(1);

      expect(await reconnect(db, acct.accountId, p)).toBe(2);
      w.clock.advance(1000);
      expect(await w.drainFor(first, second)).toEqual(['delivered', 'delivered']);
      for (const { eventId } of [first, second]) expect((await readOutcome(db, eventId)).event.status).toBe('completed');
    });

    it('sends no user identifier of any kind when ad_user_data is denied; the action is skipped or sends the click only', async () => {
      const p = platform();
      const { acct, w } = await warmed(p);
      const sendsBefore = p.sends().length;
      const identifiersBefore = p.sentUserIdentifiers().length;
      const report = await reportSignup(db, acct, p, { adUserData: 'denied' });
      const { eventId } = report;
      w.clock.advance(1000);
      const [result] = await w.drainFor(report);
      const { event, actions } = await readOutcome(db, eventId);
      expect(event.status).toBe('completed');
      expect(p.sentUserIdentifiers().length).toBe(identifiersBefore);
      if (type === 'google-ads') {
        // Google takes the click with the visitor's consent state (Data Manager API Event.consent).
        expect(result).toBe('delivered');
        const sent = p.sends().at(-1)!.body.events[0];
        expect(sent.consent).toEqual({ adUserData: 'CONSENT_DENIED' });
        expect(sent.userData).toBeUndefined();
        expect(sent.adIdentifiers).toEqual({ gclid: p.clickIds.gclid });
      } else {
        expect(result).toBe('skipped');
        expect(p.sends().length).toBe(sendsBefore);
        expect(actions[0]).toMatchObject({ status: 'skipped', attempts: 0, error: { code: 'consent_denied' } });
      }
    });

    it("derives the dedup id from the report's customer_event_id and keeps it across resends", async () => {
      const p = platform();
      const { acct, w } = await warmed(p);
      const before = p.sentEventIds().length;
      const customerEventId = `order-${type}-${kind.name}`;
      const report = await reportSignup(db, acct, p, { customerEventId });
      const { eventId } = report;
      p.failNextSend();
      w.clock.advance(1000);
      expect(await w.drainFor(report)).toEqual(['retrying']);
      w.clock.advance(60 * 60_000);
      expect(await w.drainFor(report)).toEqual(['delivered']);
      const ids = p.sentEventIds().slice(before);
      expect(ids).toHaveLength(2);
      expect(ids[0]).toBe(ids[1]);
      if (type === 'meta' || type === 'linkedin') expect(ids[0]).toBe(customerEventId);
      expect((await readOutcome(db, eventId)).event.status).toBe('completed');
    });
  });
});
