/**
 * A flow edited while its conversions wait (unpublished, its actions reordered or one removed, published again): each
 * waiting action is still sent with its own platform's config. Delivery read the config at the action's position in the
 * flow as it is now, so after a reorder Meta's queued conversion was sent with Reddit's event name and Reddit's with
 * Meta's; and a redelivery took the conversion id of whatever action stood at that place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './revenue/support';
import { saasSignupPath } from '../../src/protocol/webhook';
import { DEFAULT_EVENT_NAME } from '../../src/server/destinations/meta/action-config';
import { DEMO_ACCOUNTS } from '../../src/demo/ad-platforms';

describe('a flow edited while its conversions wait', () => {
  let r: RevenueService;
  let seq = 0;

  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  /** A live flow of its own trigger key, with these actions. */
  async function liveFlow(actions: unknown[]): Promise<{ id: string; key: string }> {
    const key = `edited_${++seq}`;
    const flow = await r.api<{ id: string }>('POST', '/v1/flows', {
      site_id: r.setup.site.id, name: `Edited ${seq}`, trigger_config: { type: 'saas_signup', integrationId: 'api', key }, actions_config: actions,
    });
    expect((await r.api<{ status: string }>('POST', `/v1/flows/${flow.id}/publish`)).status).toBe('live');
    return { id: flow.id, key };
  }

  /** Unpublishes, replaces the actions, publishes again (how a live flow's actions are changed). */
  async function editActions(flowId: string, actions: unknown[]): Promise<void> {
    await r.api('POST', `/v1/flows/${flowId}/unpublish`);
    await r.setup.api.call('PATCH', `/v1/flows/${flowId}`, { actions_config: actions });
    await r.api('POST', `/v1/flows/${flowId}/publish`);
  }

  async function signup(key: string, customerEventId: string): Promise<void> {
    const res = await r.post(saasSignupPath(r.setup.site.site_key, key), { customer_event_id: customerEventId, email: 'ada@example.com', allow_uncorrelated: true });
    expect(res.status).toBe(200);
  }

  const metaSent = (customerEventId: string) =>
    r.fakes.meta.requests.flatMap((q) => q.body.data as Array<{ event_id: string; event_name: string }>).filter((e) => e.event_id === customerEventId);
  const redditSent = (customerEventId: string) =>
    r.fakes.reddit.requests
      .flatMap((q) => q.body.data.events as Array<{ metadata: { conversion_id: string }; type: unknown }>)
      .filter((e) => e.metadata.conversion_id === customerEventId);

  it('sends each queued action with its own platform config after the actions were reordered', async () => {
    const meta = { integrationId: 'meta', config: { event_name: 'Lead' } };
    const reddit = { integrationId: 'reddit', config: { event_name: 'LEAD' } };
    const flow = await liveFlow([meta, reddit]);
    await signup(flow.key, 'reordered-1');
    await editActions(flow.id, [reddit, meta]);
    await r.drain();

    expect(metaSent('reordered-1').map((e) => e.event_name)).toEqual(['Lead']);
    expect(redditSent('reordered-1').map((e) => e.type)).toEqual([{ tracking_type: 'LEAD' }]);
  });

  it("sends a queued action whose platform left the flow with that platform's defaults, not another's config", async () => {
    const flow = await liveFlow([{ integrationId: 'meta', config: { event_name: 'Lead' } }, { integrationId: 'reddit', config: { event_name: 'LEAD' } }]);
    await signup(flow.key, 'removed-1');
    await editActions(flow.id, [{ integrationId: 'reddit', config: { event_name: 'SIGN_UP' } }]);
    await r.drain();

    expect(metaSent('removed-1').map((e) => e.event_name)).toEqual([DEFAULT_EVENT_NAME.saas_signup]);
    expect(redditSent('removed-1').map((e) => e.type)).toEqual([{ tracking_type: 'SIGN_UP' }]);
  });

  it("redelivers a failed action with the corrected conversion id of its platform's action, wherever it now stands", async () => {
    const flow = await liveFlow([{ integrationId: 'google-ads', config: { conversion: { id: '111111111' } } }, { integrationId: 'meta', config: { event_name: 'Lead' } }]);
    await signup(flow.key, 'moved-1');
    await r.drain();
    const [event] = (await r.api<{ data: Array<{ id: string; customer_event_id: string; actions: Array<{ destination: string; status: string }> }> }>(
      'GET', `/v1/events?site_id=${r.setup.site.id}&limit=100`,
    )).data.filter((e) => e.customer_event_id === 'moved-1');
    expect(event!.actions.find((a) => a.destination === 'google-ads')!.status).toBe('failed');

    const corrected = DEMO_ACCOUNTS.google.conversionActionId;
    await editActions(flow.id, [{ integrationId: 'meta', config: { event_name: 'Lead' } }, { integrationId: 'google-ads', config: { conversion: { id: corrected } } }]);
    const sentTo = () => r.fakes.google.ingested().filter((i) => i.destination.productDestinationId === corrected).length;
    const before = sentTo();
    await r.api('POST', `/v1/events/${event!.id}/redeliver`);
    await r.drain();

    const after = await r.api<{ status: string; actions: Array<{ destination: string; status: string }> }>('GET', `/v1/events/${event!.id}`);
    expect(after.status).toBe('completed');
    expect(after.actions.find((a) => a.destination === 'google-ads')!.status).toBe('delivered');
    expect(sentTo()).toBe(before + 1);
  });
});
