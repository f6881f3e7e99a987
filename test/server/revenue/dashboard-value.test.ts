/** The dashboard shows a conversion's value, its stage and its adjustments as further steps of the trace. */
import { describe, expect, it } from 'vitest';
import { eventPage } from '../../../src/server/dashboard/pages/event';
import { currentValue, moneyOf } from '../../../src/server/dashboard/pages/events';
import type { EventRecord } from '../../../src/server/api/events';
import { currentValueOf } from '../../../src/server/api/events/events';

const session = { accountId: 'acct_1', accountName: 'Acme', csrfToken: 'csrf', sessionToken: 'tok' };

function event(fields: Partial<EventRecord> = {}): EventRecord {
  return {
    id: 'evt_1', site_id: 'site_1', site_key: 'k', occurred_at: '2026-11-21T09:30:00.000Z', flow_id: 'flow_1', flow_name: 'Paid',
    trigger: 'api', trigger_type: 'conversion', status: 'completed', match_quality: 'high', email: null, customer_event_id: 'inv_1',
    value: 29.9, currency: 'EUR', current_value: 0, current_currency: 'EUR', customer_id: 'acct_42', click_ids: { gclid: 'g' }, utm: null, created_at: '2026-11-21T09:30:01.000Z',
    stage: 'paid', match: 'identity', signup_customer_event_id: 'user_1',
    actions: [{ destination: 'google-ads', status: 'delivered', conversion_id: '1', attempts: 1, error: null, request: null, delivered_at: '2026-11-21T09:30:02.000Z' }],
    adjustments: [{
      adjustment_id: 'refund_1', type: 'retract', value: null, currency: null, occurred_at: '2026-11-22T09:00:00.000Z', created_at: '2026-11-22T09:00:01.000Z', superseded: false,
      results: [{ destination: 'google-ads', status: 'unsupported', reason: 'No retraction in the Data Manager API.' }],
    }],
    ...fields,
  };
}

describe('value and adjustments on the dashboard', () => {
  it('formats values with their currency', () => {
    expect(moneyOf(29.9, 'EUR')).toBe('EUR 29.90');
    // More decimals than the currency has: shown as reported (and sent), never rounded.
    expect(moneyOf(12.5, 'JPY')).toBe('JPY 12.5');
    expect(moneyOf(1.000001, 'EUR')).toBe('EUR 1.000001');
    expect(moneyOf(null, null)).toBeNull();
  });

  it("shows the stage, the value, how the click was found and each adjustment's result per destination", () => {
    const page = eventPage(session, event());
    expect(page).toContain('Later stage from your backend: paid');
    expect(page).toContain('EUR 29.90');
    expect(page).toContain('identity (the signup user_1)');
    // A signup found by customer id, but without a click: said so, not "none (the signup …)".
    const unpaired = eventPage(session, event({ match: 'none' }));
    expect(unpaired).toContain('none: the signup user_1 (same customer id) had no click; its identity fields (email, phone, names) went with the stage');
    // No signup found (a renewal past the identity retention, a customer id never reported): said why, not a bare "none".
    const alone = eventPage(session, event({ match: 'none', signup_customer_event_id: undefined, click_ids: null, match_quality: 'low' }));
    expect(alone).toContain('none: no signup with this customer id was reported before the stage (or it is past the identity retention, which clears customer ids), so no ad click went with it');
    expect(page).toContain('Retracted');
    expect(page).toContain('No retraction in the Data Manager API.');
  });

  it('says how a stage found its click through its signup, in the stage and in its pairing', () => {
    const page = eventPage(session, event({ match_reason: 'paired', correlation_token: 'AAAAAAAAAAAAAAAAAAAAAA' }));
    expect(page).toMatch(/<code>AAAAAAAAAAAAAAAAAAAAAA<\/code> <span class="hint">the signup user_1(&#39;|')s \(found by customer id\)/);
    expect(page).toContain("signup (found by customer id) found the loader&#39;s snapshot, or once that snapshot&#39;s retention had passed, the click the signup&#39;s event kept");
    expect(page).not.toContain('correlation token found the loader');
  });

  it("names each action's conversion as its platform does, from the request summary where the action has no conversion id", () => {
    const delivered = (destination: string, request: Record<string, unknown>) =>
      ({ destination, status: 'delivered', conversion_id: null, attempts: 1, error: null, request, delivered_at: '2026-11-21T09:30:02.000Z' });
    const page = eventPage(session, event({
      actions: [
        delivered('meta', { event_name: 'Purchase' }),
        delivered('linkedin', { endpoint: '/rest/conversionEvents', conversion: 'urn:lla:llaPartnerConversion:104013' }),
        delivered('reddit', { api: 'reddit-conversions-v3', type: { tracking_type: 'PURCHASE' }, conversion_id: 'evt_1:paid' }),
        delivered('reddit', { api: 'reddit-conversions-v3', type: { tracking_type: 'CUSTOM', custom_event_name: 'Upgrade' } }),
        delivered('tiktok', { api: 'tiktok-events', pixel_code: 'C123', event: 'Purchase' }),
      ],
    }));
    const conversions = [...page.matchAll(/<dt>Conversion<\/dt><dd>(.*?)<\/dd>/g)].map((m) => m[1]);
    expect(conversions).toEqual([
      '<code>Purchase</code>', '<code>urn:lla:llaPartnerConversion:104013</code>', '<code>PURCHASE</code>', '<code>Upgrade</code>', '<code>Purchase</code>',
    ]);
  });

  it('shows an erased conversion as erased, never as a failure to fix', () => {
    const erasedAction = { destination: 'google-ads', status: 'failed', conversion_id: '1', attempts: 0, error: { code: 'erased', message: "Not sent: the person's data was erased." }, request: null, delivered_at: null };
    const erased = event({ status: 'failed', erased: true, click_ids: null, match_reason: 'snapshot_pending', actions: [erasedAction] });
    const page = eventPage(session, erased);
    expect(page).toMatch(/<h1>Conversion <span class="badge"[^>]*>erased<\/span>/);
    expect(page).not.toContain('Why it failed');
    expect(page).not.toContain('Send failed deliveries again');
    expect(page).toContain('Its person was erased: the correlation token and the click data are gone.');
    expect(page).toContain('Its person was erased: the correlation token is gone with the click data.');
    expect(page).toContain('Its person was erased: the click and the landing went with their data.');
    expect(page).not.toContain('snapshot was not paired');
    expect(page).not.toContain('the report came without');
    // Said once, as what happened: no platform answered it.
    expect(page.match(/Not sent: the person/g)).toHaveLength(1);
  });

  it('says what a queued adjustment waits for when it has no reason of its own', () => {
    const queued = event({
      adjustments: [{
        adjustment_id: 'up_1', type: 'restate', value: 39.99, currency: 'EUR', occurred_at: '2026-11-22T09:00:00.000Z', created_at: '2026-11-22T09:00:01.000Z', superseded: false,
        results: [{ destination: 'meta', status: 'queued', reason: null }],
      }],
    });
    expect(eventPage(session, queued)).toContain('Waits for the conversion itself: applied to its first send if it has not gone out yet');
  });

  it('shows a conversion at the last to arrive of its restatements not stored superseded, and badges the stored flag', () => {
    const restate = (id: string, value: number, occurredAt: string, superseded = false) => ({
      adjustment_id: id, type: 'restate', value, currency: 'EUR', occurred_at: occurredAt, created_at: '2026-11-22T11:00:00.000Z', superseded,
      results: [{ destination: 'google-ads', status: 'adjusted', reason: null }],
    });
    const superseded = (adjustments: ReturnType<typeof restate>[]) =>
      [...eventPage(session, event({ value: 39, adjustments })).matchAll(/<h3>Restated (.*?)<\/h3>/g)].map((m) => m[1]!.includes('>superseded</span>'));
    // The downgrade at 10:05 arrived before the upgrade at 10:00 (in the order they arrived, as the API lists them),
    // which was stored superseded; of two not superseded (dated alike), the last to arrive.
    const outOfOrder = [restate('down', 29, '2026-11-22T10:05:00.000Z'), restate('up', 49, '2026-11-22T10:00:00.000Z', true)];
    expect(currentValueOf({ value: 39, currency: 'EUR' }, outOfOrder)).toEqual({ value: 29, currency: 'EUR' });
    const shown = String(currentValue(event({ value: 39, adjustments: outOfOrder })));
    expect(shown).toContain('EUR 29.00');
    expect(shown).not.toContain('49.00');
    const tie = [...outOfOrder, restate('fix', 31, '2026-11-22T10:05:00.000Z')];
    expect(currentValueOf({ value: 39, currency: 'EUR' }, tie)).toEqual({ value: 31, currency: 'EUR' });
    expect(superseded(tie)).toEqual([false, true, false]);
    // Recorded before migration 32 (arrival order then; none superseded): the upgrade dated 10:00 arrived last and was
    // sent after the downgrade, so the platforms hold 49. Neither is badged, and the value is what they hold.
    const upgradedStore = [restate('down', 29, '2026-11-22T10:05:00.000Z'), restate('up', 49, '2026-11-22T10:00:00.000Z')];
    expect(currentValueOf({ value: 39, currency: 'EUR' }, upgradedStore)).toEqual({ value: 49, currency: 'EUR' });
    expect(String(currentValue(event({ value: 39, adjustments: upgradedStore })))).toContain('EUR 49.00');
    expect(superseded(upgradedStore)).toEqual([false, false]);
  });

  it('names the event a platform was sent, and offers the reconnect where an action waits for one', () => {
    const waiting = {
      destination: 'meta', status: 'queued', conversion_id: null, attempts: 0, delivered_at: null,
      error: { code: 'reauthorization_required', message: 'Meta refused cnv\u2019s authorization.', retrying: true },
      request: { api: 'meta-conversions', pixel_id: '1234567890123456', event_name: 'Purchase' },
    };
    const page = eventPage(session, event({ status: 'queued', actions: [waiting as never] }));
    expect(page).toContain('<code>Purchase</code>');
    expect(page).toContain('<a href="/dashboard/destinations">Reconnect it on Destinations</a>');
  });
});
