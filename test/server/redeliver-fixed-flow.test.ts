/**
 * Redelivery after the fix its error asks for. A Google Ads conversion that failed because the flow action's
 * conversion.id names no conversion action of the account says "Check the action's conversion.id"; the user corrects
 * the flow and sends the failed delivery again. Each action kept the conversion id its flow had when the event was
 * written, and a redelivery sent that one again: it failed again, however often it was sent, and only a new conversion
 * took the corrected id. A redelivery now takes the flow's current conversion id for that action (when the flow's
 * action at that place is still of that platform); a delivered conversion keeps its own (its adjustments go there).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { googleSettings } from './support/google-connection';
import { connectApiTrigger, setSiteDomain, signedReport } from './support/fixtures';
import { startFakeGoogle, type FakeGoogle } from '../../src/demo/fakes/google';
import { startDeliveryWorker } from '../../src/server/delivery/worker';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { sealCredentials, upsertDestination } from '../../src/server/destinations';
import { memoryLog, steppableClock } from './delivery/fixtures';

const SECRET = 'whsec_redeliver_fixed_flow_0123456789';
const ORIGIN = 'https://www.example.com';

describe.each(DATABASE_KINDS)('redelivery after the flow is corrected on $name', (kind) => {
  let svc: RestService;
  let google: FakeGoogle;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    google = await startFakeGoogle({ conversionActions: { '1234567890': ['987654321'] } });
    svc = await createRestService(kind, googleSettings(google));
  });
  afterAll(async () => {
    await svc.close();
    await google.close();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  /**
   * A tenant whose flow names a conversion action the account lacks (111111111), one signup reported, and its delivery
   * run: the event failed with conversion_action_not_found.
   */
  async function failedSignup(tenantName: string, customerEventId: string, email: string) {
    const tenant = await svc.addTenant(tenantName);
    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      svc.app.inject({ method, url, headers: tenant.auth, ...(payload ? { payload } : {}) });
    await setSiteDomain(svc.db, tenant.site.id, ORIGIN);
    await connectApiTrigger(svc.db, { id: tenant.site.id, account_id: tenant.accountId }, SECRET);
    await upsertDestination(svc.db, tenant.accountId, 'google-ads', { customer_id: '1234567890', login_customer_id: null, api: 'data_manager' },
      sealCredentials(serviceSecretBox(svc.settings), { refresh_token: google.issueRefreshToken() }));
    const flow = json(await call('POST', '/v1/flows', {
      site_id: tenant.site.id, name: 'Signups',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'signup' },
      actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '111111111' } } }],
    }));
    expect((await call('POST', `/v1/flows/${flow.id}/publish`)).statusCode).toBe(200);
    const report = await svc.app.inject(signedReport(tenant.site.site_key, 'signup', { customer_event_id: customerEventId, email, allow_uncorrelated: true }, SECRET));
    expect(report.statusCode).toBe(200);
    const eventId = (json(await call('GET', '/v1/events')).data as Array<{ id: string }>)[0]!.id;
    const clock = steppableClock(new Date(Date.now() + 60_000));
    const delivery = startDeliveryWorker({ db: svc.db, settings: svc.settings, log: memoryLog(), now: clock.now, autoStart: false });
    workers.push(delivery);
    await delivery.drain();
    expect(json(await call('GET', `/v1/events/${eventId}`))).toMatchObject({
      status: 'failed', actions: [{ status: 'failed', error: { code: 'conversion_action_not_found' } }],
    });
    return { call, flowId: flow.id as string, eventId, clock, delivery };
  }

  it('sends a failed conversion with the conversion id the flow was corrected to', async () => {
    const { call, flowId, eventId, clock, delivery } = await failedSignup('Corrected flow', 'signup-1', 'ada@example.com');

    // The fix the error asks for: the flow's conversion.id corrected (a live flow is unpublished, edited, published).
    expect((await call('POST', `/v1/flows/${flowId}/unpublish`)).statusCode).toBe(200);
    expect((await call('PATCH', `/v1/flows/${flowId}`, { actions_config: [{ integrationId: 'google-ads', config: { conversion: { id: '987654321' } } }] })).statusCode).toBe(200);
    expect((await call('POST', `/v1/flows/${flowId}/publish`)).statusCode).toBe(200);

    expect((await call('POST', `/v1/events/${eventId}/redeliver`)).statusCode).toBe(200);
    clock.advance(1000);
    await delivery.drain();
    expect(json(await call('GET', `/v1/events/${eventId}`))).toMatchObject({ status: 'completed', actions: [{ status: 'delivered' }] });
    const sent = google.ingested().filter((i) => i.destination.productDestinationId === '987654321');
    expect(sent).toHaveLength(1);
  });

  it('keeps the conversion id of the flow when no action of its platform is left in the flow', async () => {
    const { call, flowId, eventId } = await failedSignup('Replaced action', 'signup-2', 'bo@example.com');
    expect((await call('POST', `/v1/flows/${flowId}/unpublish`)).statusCode).toBe(200);
    const patched = await call('PATCH', `/v1/flows/${flowId}`, { actions_config: [{ integrationId: 'meta', config: {} }] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await call('POST', `/v1/events/${eventId}/redeliver`)).statusCode).toBe(200);
    const [action] = await svc.db.query<{ conversion_id: string | null }>('select conversion_id from event_actions where event_id = $1', [eventId]);
    expect(action!.conversion_id).toBe('111111111');
  });
});
