import { describe, expect, it } from 'vitest';
import { buildJourney, type JourneyInput } from '../../src/demo/journey';
import { eventFacts, type ApiEvent } from '../../src/demo/event-facts';
import { eventsTable } from '../../src/demo/pages/events';
import type { Signup } from '../../src/demo/signups';
import type { ReceivedRequest, RequestFinder } from '../../src/demo/platform-requests';
import type { ReportSignupResult } from '../../src/client/index';

const TOKEN = 'AAAAAAAAAAAAAAAAAAAAAA';

function signup(report: ReportSignupResult | null, correlationToken: string | null = TOKEN, reportError: string | null = null): Signup {
  return { id: 'usr_1', email: 'ada@example.com', name: 'Ada Lovelace', createdAt: new Date(), correlationToken, report, reportError, upgrade: null, refund: null };
}

const promoted = (count = 1): ReportSignupResult => ({
  ok: true,
  sent: true,
  response: { status: count > 0 ? 'promoted' : 'no_matching_flow', promoted_count: count, customer_event_id: 'usr_1', correlated: true },
  attempts: 1,
  correlationToken: TOKEN,
  tokenProblem: null,
});

function event(fields: Partial<ApiEvent> = {}): ApiEvent {
  return {
    id: 'evt_1',
    site_key: 'k',
    occurred_at: '2026-11-21T09:30:00.000Z',
    flow_name: 'Demo signups',
    status: 'queued',
    match_quality: 'high',
    customer_event_id: 'usr_1',
    click_ids: { gclid: 'TeSt-1' },
    utm: { utm_source: 'google' },
    landing_page_url: 'http://localhost:8788/?gclid=TeSt-1',
    actions: [{ destination: 'google-ads', status: 'queued' }],
    ...fields,
  };
}

const ingest: ReceivedRequest = {
  method: 'POST',
  path: '/v1/events:ingest',
  body: { events: [{ adIdentifiers: { gclid: 'TeSt-1' } }] },
  answeredStatus: 200,
  problems: [],
  receivedAt: new Date(),
};

function input(s: Signup, events: ApiEvent[], requestsOf: RequestFinder = () => []): JourneyInput {
  return { signup: s, events: events.map(eventFacts), eventsError: null, requestsOf };
}

const states = (journey: ReturnType<typeof buildJourney>) => journey.steps.map((s) => [s.key.split(':')[0], s.state]);

describe('the journey of a signup', () => {
  it('shows the report on its way right after the signup (the backend answers the visitor first)', () => {
    const journey = buildJourney(input(signup(null), []));
    expect(states(journey)).toEqual([
      ['click', 'waiting'],
      ['intent', 'done'],
      ['report', 'waiting'],
      ['pairing', 'waiting'],
      ['deliveries', 'waiting'],
    ]);
    expect(journey.final).toBe(false);
  });

  it('ends at the report when it could not be made at all', () => {
    const journey = buildJourney(input(signup(null, TOKEN, 'fetch is not a function'), []));
    expect(journey.steps.at(-1)).toMatchObject({ key: 'report', state: 'failed', summary: 'The report could not be made: fetch is not a function' });
    expect(journey.final).toBe(true);
  });

  it('waits for the event after a promoted report, and keeps the page polling', () => {
    const journey = buildJourney(input(signup(promoted()), []));
    expect(states(journey)).toEqual([
      ['click', 'waiting'],
      ['intent', 'done'],
      ['report', 'done'],
      ['pairing', 'waiting'],
      ['deliveries', 'waiting'],
    ]);
    expect(journey.final).toBe(false);
  });

  it('shows the click, the pairing and a delivery in progress while the action is queued', () => {
    const journey = buildJourney(input(signup(promoted()), [event()]));
    expect(states(journey)).toEqual([
      ['click', 'done'],
      ['intent', 'done'],
      ['report', 'done'],
      ['pairing', 'done'],
      ['deliveries', 'waiting'],
    ]);
    expect(journey.steps[0]!.facts).toContainEqual(['gclid', 'TeSt-1']);
    expect(journey.final).toBe(false);
  });

  it('is final once the event completed, with the request each fake received on its delivery', () => {
    const done = event({
      status: 'completed',
      click_ids: { gclid: 'TeSt-1', fbclid: 'fb-1' },
      actions: [
        { destination: 'google-ads', status: 'delivered' },
        { destination: 'meta', status: 'delivered' },
      ],
    });
    const asked: string[] = [];
    const journey = buildJourney(input(signup(promoted()), [done], (destination, e) => (asked.push(`${destination} ${e.id}`), destination === 'google-ads' ? [ingest, ingest] : [])));
    expect(states(journey).every(([, state]) => state === 'done')).toBe(true);
    const step = journey.steps.at(-1)!;
    expect(step).toMatchObject({ key: 'deliveries:evt_1', title: 'Delivered to 2 ad platforms', state: 'done' });
    expect(asked).toEqual(['google-ads evt_1', 'meta evt_1']);
    expect(step.deliveries).toEqual([
      expect.objectContaining({ destination: 'google-ads', label: 'Google Ads', state: 'done', status: 'delivered', request: ingest, requestCount: 2, clickNote: expect.stringContaining('adIdentifiers.gclid') }),
      expect.objectContaining({ destination: 'meta', label: 'Meta', state: 'done', requestCount: 0, clickNote: expect.stringContaining('fbc') }),
    ]);
    expect(step.deliveries![1]).not.toHaveProperty('request');
    expect(journey.final).toBe(true);
  });

  it('keeps the page polling while one platform is still queued, and counts what is delivered', () => {
    const partly = event({ actions: [{ destination: 'google-ads', status: 'delivered' }, { destination: 'linkedin', status: 'queued' }] });
    const journey = buildJourney(input(signup(promoted()), [partly]));
    expect(journey.steps.at(-1)).toMatchObject({ title: 'Delivering to 2 ad platforms', state: 'waiting', summary: '1 of 2 delivered so far.' });
    expect(journey.final).toBe(false);
  });

  it('shows a failed delivery with the destination error', () => {
    const failed = event({
      status: 'failed',
      actions: [{ destination: 'google-ads', status: 'failed', error: { code: 'UNPARSEABLE_GCLID', message: 'The gclid could not be decoded.' } }],
    });
    const journey = buildJourney(input(signup(promoted()), [failed]));
    const step = journey.steps.at(-1)!;
    expect(step).toMatchObject({ state: 'failed', title: 'Delivered to 0 of 1 ad platform' });
    expect(step.deliveries![0]!.facts).toContainEqual(['error', 'UNPARSEABLE_GCLID: The gclid could not be decoded.']);
    expect(journey.final).toBe(true);
  });

  it('waits while the snapshot is pending (no match quality yet)', () => {
    const pending = event({ match_quality: null, click_ids: null, match_reason: 'snapshot_pending' });
    const journey = buildJourney(input(signup(promoted()), [pending]));
    expect(journey.steps.find((s) => s.key.startsWith('pairing'))!.state).toBe('waiting');
  });

  it('marks the click as skipped when the visit came without an ad click', () => {
    const noClick = event({ match_quality: 'medium', click_ids: null, status: 'completed', actions: [{ destination: 'google-ads', status: 'delivered' }] });
    const journey = buildJourney(input(signup(promoted()), [noClick]));
    expect(journey.steps[0]).toMatchObject({ key: 'click', state: 'skipped' });
  });

  it('stops at the report when nothing was sent for lack of a correlation token', () => {
    const noToken: ReportSignupResult = {
      ok: false,
      sent: false,
      reason: 'no_correlation_token',
      tokenProblem: 'missing',
      message: 'No correlation token, so nothing was sent.',
    };
    const journey = buildJourney(input(signup(noToken, null), []));
    expect(states(journey)).toEqual([
      ['click', 'waiting'],
      ['intent', 'failed'],
      ['report', 'failed'],
    ]);
    expect(journey.steps[2]!.summary).toBe('Nothing was sent: No correlation token, so nothing was sent.');
    expect(journey.final).toBe(true);
  });

  it('says so when no live flow has the trigger key', () => {
    const journey = buildJourney(input(signup(promoted(0)), []));
    expect(journey.steps.at(-1)).toMatchObject({ title: 'No live flow for this trigger', state: 'failed' });
    expect(journey.final).toBe(true);
  });

  it('stays open until every promoted event has shown up', () => {
    const done = event({ status: 'completed', actions: [{ destination: 'google-ads', status: 'delivered' }] });
    expect(buildJourney(input(signup(promoted(2)), [done])).final).toBe(false);
    expect(buildJourney(input(signup(promoted(2)), [done, { ...done, id: 'evt_2' }])).final).toBe(true);
  });
});

describe('the paid plan of a signup', () => {
  const upgraded = (): Signup => ({
    ...signup(promoted()),
    upgrade: {
      id: 'usr_1.paid',
      at: new Date(),
      error: null,
      result: { ok: true, sent: true, response: { status: 'promoted', promoted_count: 1, customer_event_id: 'usr_1.paid', correlated: false, match: 'identity' }, attempts: 1, correlationToken: null, tokenProblem: 'missing' },
    },
    refund: null,
  });
  const delivered = [{ destination: 'microsoft-ads', status: 'delivered' }, { destination: 'meta', status: 'delivered' }];
  const stage = (fields: Partial<ApiEvent> = {}) =>
    event({ id: 'evt_2', flow_name: 'Demo paid plans', trigger_type: 'conversion', customer_event_id: 'usr_1.paid', value: 29, currency: 'EUR', status: 'completed', actions: delivered, ...fields });

  it('shows the upgrade found through the customer id and its deliveries with the value', () => {
    const journey = buildJourney(input(upgraded(), [event({ status: 'completed', actions: delivered }), stage()]));
    expect(states(journey).slice(-2)).toEqual([['upgrade', 'done'], ['deliveries', 'done']]);
    expect(journey.steps.find((s) => s.key === 'upgrade')!.facts).toContainEqual(['match', 'identity: the click of the signup with this customer_id']);
    expect(journey.steps.at(-1)!.title).toBe('Delivered to 2 ad platforms: the paid plan, EUR 29.00');
    expect(journey.final).toBe(true);
  });

  it('shows the refund per platform: taken back where the platform can, unsupported with the reason elsewhere', () => {
    const s: Signup = { ...upgraded(), refund: { id: 'usr_1.refund', at: new Date(), error: null, result: null } };
    const adjustments = (status: string) => [
      {
        adjustment_id: 'usr_1.refund', type: 'retract', value: null, currency: null, occurred_at: '2026-11-21T10:00:00.000Z', created_at: '2026-11-21T10:00:00.000Z',
        results: [{ destination: 'microsoft-ads', status, reason: null }, { destination: 'meta', status: 'unsupported', reason: 'Meta has no retraction.' }],
      },
    ];
    const waiting = buildJourney(input(s, [event({ status: 'completed', actions: delivered }), stage({ adjustments: adjustments('queued') })]));
    expect(states(waiting).slice(-2)).toEqual([['refund', 'waiting'], ['adjustment', 'waiting']]);
    expect(waiting.final).toBe(false);
    s.refund!.result = { ok: true, sent: true, response: { status: 'accepted', adjustment_id: 'usr_1.refund', events: 1 }, attempts: 1, correlationToken: null, tokenProblem: 'missing' };
    const done = buildJourney(input(s, [event({ status: 'completed', actions: delivered }), stage({ adjustments: adjustments('adjusted') })]));
    const last = done.steps.at(-1)!;
    expect(last).toMatchObject({ title: 'Refund applied where the platforms allow it', state: 'done', summary: '1 took it back, 1 have no such operation.' });
    expect(last.deliveries!.map((d) => [d.destination, d.state, d.summary])).toEqual([
      ['microsoft-ads', 'done', 'Microsoft Advertising took the conversion back.'],
      ['meta', 'skipped', 'Not sent: Meta has no retraction.'],
    ]);
    expect(done.final).toBe(true);
  });
});

describe('reading an event', () => {
  it('tolerates every field but the guaranteed ones being absent', () => {
    expect(eventFacts({ id: 'evt_x', site_key: 'k', occurred_at: null })).toEqual({
      id: 'evt_x',
      occurredAt: null,
      flowName: null,
      trigger: null,
      status: null,
      matchQuality: null,
      matchReason: null,
      customerEventId: null,
      correlationToken: null,
      clickIds: {},
      utm: {},
      landingPageUrl: null,
      touchCapturedAt: null,
      triggerType: null,
      value: null,
      currency: null,
      customerId: null,
      erased: false,
      actions: [],
      adjustments: [],
    });
  });

  it("lists an erased person's event without a link to a user the store never knew", () => {
    const erased = eventFacts({ id: 'evt_e', site_key: 'k', occurred_at: null, erased: true, customer_id: 'erased_abc', data: { customer_event_id: 'erased_def' } });
    expect(erased.erased).toBe(true);
    const table = eventsTable([erased], null).toString();
    expect(table).not.toContain('/welcome?user=');
    expect(table).toContain('>erased</span>');
    const kept = eventsTable([eventFacts({ id: 'evt_k', site_key: 'k', occurred_at: null, customer_id: 'usr_1' })], null).toString();
    expect(kept).toContain('/welcome?user=usr_1');
  });

  it('reads passed-through facts from the event or from its data object, and skips malformed actions', () => {
    const facts = eventFacts({
      id: 'evt_y',
      site_key: 'k',
      occurred_at: null,
      data: { customer_event_id: 'usr_9', utm: { utm_campaign: 'demo', bad: 3 } },
      actions: [{ destination: 'google-ads', status: 'delivered' }, { status: 'x' }, null],
    });
    expect(facts.customerEventId).toBe('usr_9');
    expect(facts.utm).toEqual({ utm_campaign: 'demo' });
    expect(facts.actions).toEqual([{ destination: 'google-ads', status: 'delivered', error: null, request: null }]);
  });
});
