/**
 * The Destinations page says how many deliveries to each platform failed, and one press sends them all again
 * (POST /v1/destinations/{id}/redeliver, round after round), then says so; the page shows no failure once none is left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from './support/harness';
import { issueSignInLink } from '../../src/server/dashboard';
import { pressSignIn } from './support/dashboard-sign-in';
import { upsertDestination } from '../../src/server/destinations/sql';
import { insertReportedEvent } from './delivery/fixtures';
import { redeliverDestinationFailures } from '../../src/server/dashboard/views';
import type { Database } from '../../src/server/db/db';

/** Marks every delivery of these events failed, as the delivery worker leaves a permanent refusal. */
async function failDeliveries(db: Database, eventIds: string[]): Promise<void> {
  await db.query(
    `update event_actions set status = 'failed', attempts = 1, error = '{"code": "permission_denied", "message": "The pixel refused the token."}'::jsonb
     where event_id = any($1::text[])`,
    [eventIds],
  );
  await db.query('delete from outbox where event_action_id in (select id from event_actions where event_id = any($1::text[]))', [eventIds]);
  await db.query(`update events set status = 'failed' where id = any($1::text[])`, [eventIds]);
}

describe("the Destinations page's redelivery of a platform's failed deliveries", () => {
  let svc: TestService;
  let cookie: string;
  let csrf: string;
  const meta = [{ destination: 'meta', conversionId: null }];

  beforeAll(async () => {
    svc = await createTestService({ CNV_PUBLIC_URL: 'http://cnv.test' });
    const signed = await pressSignIn(svc.app, (await issueSignInLink(svc.db, svc.settings, svc.accountId)).url);
    cookie = String(signed.headers['set-cookie']).split(';')[0]!;
    const page = await svc.app.inject({ method: 'GET', url: '/dashboard/destinations', headers: { cookie } });
    csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  });
  afterAll(() => svc.close());

  const page = async (url = '/dashboard/destinations') => (await svc.app.inject({ method: 'GET', url, headers: { cookie } })).body;
  const press = (destinationId: string) =>
    svc.app.inject({
      method: 'POST', url: `/dashboard/destinations/${destinationId}/redeliver`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf }).toString(),
    });

  it('shows the failed deliveries with a button, sends them again on a press, and then shows none', async () => {
    const destination = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' }, null);
    const events = [];
    for (let i = 0; i < 2; i++) events.push((await insertReportedEvent(svc.db, { accountId: svc.accountId, site: svc.site }, { actions: meta })).eventId);
    await failDeliveries(svc.db, events);

    const before = await page();
    expect(before).toContain('2 deliveries to Meta failed.');
    expect(before).toContain(`action="/dashboard/destinations/${destination.id}/redeliver"`);
    expect(before).toContain('href="/dashboard/events?status=failed"');
    // The live list (refreshed every few seconds) says the same.
    expect(await page('/dashboard/destinations/list')).toContain('2 deliveries to Meta failed.');

    const pressed = await press(destination.id);
    expect(pressed.statusCode).toBe(303);
    expect(pressed.headers.location).toBe(`/dashboard/destinations?done=destination_redelivered#${destination.id}`);
    const after = await page(String(pressed.headers.location));
    expect(after).toContain('The failed deliveries are queued again');
    expect(after).not.toContain('deliveries to Meta failed');
    const statuses = await svc.db.query<{ status: string }>('select status from event_actions where event_id = any($1::text[])', [events]);
    expect(statuses.map((s) => s.status)).toEqual(['queued', 'queued']);

    // Pressed again (a second tab): nothing had failed any more, and the page says so.
    const again = await press(destination.id);
    expect(again.headers.location).toBe(`/dashboard/destinations?done=destination_nothing_failed#${destination.id}`);
    expect(await page(String(again.headers.location))).toContain('Nothing of that destination had failed');
  });

  it('sends a large backlog round after round, and says when more are left', async () => {
    const { accountId } = svc;
    const [destination] = await svc.db.query<{ id: string }>(`select id from destinations where account_id = $1 and type = 'meta'`, [accountId]);
    const events = [];
    for (let i = 0; i < 3; i++) events.push((await insertReportedEvent(svc.db, { accountId, site: svc.site }, { actions: meta })).eventId);
    await failDeliveries(svc.db, events);
    expect(await redeliverDestinationFailures(svc.db, accountId, destination!.id, { rounds: 2, limit: 1 })).toEqual({ actions: 2, more: true });
    expect(await redeliverDestinationFailures(svc.db, accountId, destination!.id, { rounds: 2, limit: 1 })).toEqual({ actions: 1, more: false });
  });

  it("answers another account's destination with the page for what does not exist", async () => {
    const other = await upsertDestination(svc.db, (await svc.db.query<{ id: string }>(`insert into accounts (id, name) values ('acc_other_redeliver', 'Other') returning id`))[0]!.id, 'meta', { pixel_id: '6543210987654321' }, null);
    const res = await press(other.id);
    expect(res.statusCode).toBe(404);
  });
});
