/**
 * Conversions that wait for a destination to be authorized again are looked at every 10 minutes, for as long as the
 * destination waits (days, when nobody reconnects it). Each round wrote one warning line per waiting conversion: a
 * destination with a thousand waiting conversions wrote 144,000 lines a day, and more each day, burying everything
 * else in the log. A round now says it once, with how many wait and for which destinations.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../support/databases';
import type { Database } from '../../../src/server/db/db';
import { startDeliveryWorker } from '../../../src/server/delivery/worker';
import { startFakeGoogle, type FakeGoogle } from '../../../src/demo/fakes/google';
import { createDeliveryFixture, insertReportedEvent, memoryLog, readOutcome, settingsFor, steppableClock } from './fixtures';

const WAITING = 6;

describe.each(DATABASE_KINDS)('the log of waiting conversions on $name', (kind) => {
  let db: Database;
  let google: FakeGoogle;
  const workers: Array<{ stop(): Promise<void> }> = [];
  beforeAll(async () => {
    [db, google] = await Promise.all([kind.open(), startFakeGoogle()]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await Promise.all([db.close(), google.close()]);
  });

  it('says once per round how many conversions wait for a new authorization, not once per conversion', async () => {
    const fx = await createDeliveryFixture(db, { api: 'data_manager', refreshToken: google.issueRefreshToken() });
    await db.query(`update destinations set status = 'reauthorization_required' where account_id = $1`, [fx.accountId]);
    const events = [];
    for (let i = 0; i < WAITING; i++) events.push(await insertReportedEvent(db, fx, { customerEventId: `waiting-${i}` }));
    const log = memoryLog();
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const worker = startDeliveryWorker({ db, settings: settingsFor('http://legacy.invalid', {}, google), log, now: clock.now, autoStart: false, random: () => 0.5 });
    workers.push(worker);
    const waitingLines = () => log.lines.filter((l) => /authorized again/.test(l.msg ?? ''));

    for (let round = 1; round <= 3; round++) {
      const results = await worker.drain();
      expect(results.filter((r) => r.result === 'waiting_for_reauthorization')).toHaveLength(WAITING);
      expect(waitingLines()).toHaveLength(round);
      expect(waitingLines().at(-1)).toMatchObject({ level: 'warn', obj: { waiting: WAITING, destinations: ['google-ads'] } });
      clock.advance(10 * 60_000);
    }
    // The conversions themselves still wait, queued, nothing counted.
    for (const { eventId } of events) {
      const { actions } = await readOutcome(db, eventId);
      expect(actions[0]).toMatchObject({ status: 'queued', attempts: 0, error: { code: 'reauthorization_required' } });
    }
  });
});
