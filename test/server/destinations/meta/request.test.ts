import { describe, expect, it } from 'vitest';
import {
  buildEventsBody,
  buildServerEvent,
  eventsUrl,
  metaEventId,
} from '../../../../src/server/destinations/meta/request';
import { NOW, metaInput } from './fixtures';

const PIXEL = '1234567890123456';

describe('a cnv conversion as a Meta server event', () => {
  it('builds the website event with hashed identity, fbc from the fbclid, the _fbp cookie and the browser', () => {
    const built = buildServerEvent(metaInput(), PIXEL, NOW);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.event).toEqual({
      event_name: 'CompleteRegistration',
      event_time: Date.parse('2026-11-21T09:30:00.000Z') / 1000,
      event_id: 'user_42',
      action_source: 'website',
      event_source_url: 'https://app.example.com/signup',
      user_data: {
        em: [expect.stringMatching(/^[0-9a-f]{64}$/)],
        ph: [expect.stringMatching(/^[0-9a-f]{64}$/)],
        fn: expect.stringMatching(/^[0-9a-f]{64}$/),
        ln: expect.stringMatching(/^[0-9a-f]{64}$/),
        fbc: `fb.1.${Date.parse('2026-11-20T08:00:00.000Z')}.IwAR2F4-dbP0l7Mn`,
        fbp: 'fb.1.1596403881668.1116446470',
        client_ip_address: '203.0.113.7',
        client_user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
      },
    });
  });

  it('sends the page address without what names the visitor in clear: contact-detail parameters, an address in a value or the path, credentials, the fragment', () => {
    const sent = (pageUrl: string) => {
      const built = buildServerEvent(metaInput({ pageUrl }), PIXEL, NOW);
      return built.ok ? built.event.event_source_url : undefined;
    };
    expect(sent('https://app.example.com/signup?email=ada%40example.com&plan=pro&utm_source=newsletter&fbclid=IwAR2F4#token=abc')).toBe(
      'https://app.example.com/signup?plan=pro&utm_source=newsletter&fbclid=IwAR2F4',
    );
    expect(sent('https://app.example.com/signup?ref=ada.lovelace@example.com&First_Name=Ada&user-email=x&Phone=%2B44%2020%207946%200958&p=0044207946095')).toBe(
      'https://app.example.com/signup',
    );
    expect(sent('https://user:secret@app.example.com/invite/ada%40example.com?team=7')).toBe('https://app.example.com/?team=7');
    // An address with nothing of the kind is sent as the browser had it.
    expect(sent('https://app.example.com/pricing?plan=pro%20max&utm_campaign=nov+sale')).toBe('https://app.example.com/pricing?plan=pro%20max&utm_campaign=nov+sale');
  });

  it('sends Lead for a form submission and the configured name when the action sets one', () => {
    const lead = buildServerEvent(metaInput({ trigger: 'form_submission' }), PIXEL, NOW);
    const named = buildServerEvent(metaInput({ actionConfig: { event_name: 'StartTrial' } }), PIXEL, NOW);
    expect(lead.ok && lead.event.event_name).toBe('Lead');
    expect(named.ok && named.event.event_name).toBe('StartTrial');
  });

  it('keeps the same event_id on every resend: the reporter’s id, else cnv’s event id', () => {
    expect(metaEventId({ customerEventId: 'user_42', eventId: 'evt_01' })).toBe('user_42');
    expect(metaEventId({ customerEventId: null, eventId: 'evt_01' })).toBe('evt_01');
    const first = buildServerEvent(metaInput(), PIXEL, NOW);
    const again = buildServerEvent(metaInput(), PIXEL, new Date(NOW.getTime() + 3_600_000));
    expect(first.ok && again.ok && first.event.event_id === again.event.event_id).toBe(true);
  });

  it('refuses a conversion older than 7 days before sending, with a plain hint', () => {
    const old = metaInput({ occurredAt: new Date(NOW.getTime() - 7 * 86_400_000 - 1000) });
    const built = buildServerEvent(old, PIXEL, NOW);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.error.code).toBe('event_too_old');
    expect(built.error.hint).toBeTruthy();
  });

  it('sends a conversion exactly 7 days old', () => {
    expect(buildServerEvent(metaInput({ occurredAt: new Date(NOW.getTime() - 7 * 86_400_000) }), PIXEL, NOW).ok).toBe(true);
  });

  it('sends nothing for a visitor who denied ad_user_data consent', () => {
    const built = buildServerEvent(metaInput({ consent: { ad_user_data: 'denied', ad_personalization: null } }), PIXEL, NOW);
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.error.code).toBe('consent_denied');
  });

  it('calls a report without a browser snapshot "other", since a website event needs a user agent and a page', () => {
    const built = buildServerEvent(metaInput({ userAgent: null, ipAddress: null, pageUrl: null, cookies: {}, clickIds: {} }), PIXEL, NOW);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.event.action_source).toBe('other');
    expect(built.event.event_source_url).toBeUndefined();
    expect(Object.keys(built.event.user_data).sort()).toEqual(['em', 'fn', 'ln', 'ph']);
  });

  it('refuses an event with nothing Meta can match on', () => {
    const built = buildServerEvent(
      metaInput({ identity: { first_name: 'Ada' }, userAgent: null, ipAddress: null, cookies: {}, clickIds: {} }),
      PIXEL,
      NOW,
    );
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.error.code).toBe('no_identifiers');
  });

  it('summarises with hashes, ids and kinds only: no IP address, user agent or raw identity', () => {
    const built = buildServerEvent(metaInput(), PIXEL, NOW);
    const text = JSON.stringify(built.summary);
    for (const secret of ['203.0.113.7', 'Mozilla', 'Ada@Example.com', 'ada@example.com', '9876543', 'Lovelace']) {
      expect(text).not.toContain(secret);
    }
    expect(built.summary).toMatchObject({
      api: 'meta-conversions',
      pixel_id: PIXEL,
      event_name: 'CompleteRegistration',
      event_id: 'user_42',
      action_source: 'website',
      user_data: { fbc: 'built from fbclid', fbp: 'from the _fbp cookie', client_ip_address: 'sent', client_user_agent: 'sent' },
    });
  });

  it('puts the token in the body, not the URL, and test_event_code only when asked', () => {
    expect(eventsUrl('https://graph.facebook.com', 'v24.0', PIXEL)).toBe(`https://graph.facebook.com/v24.0/${PIXEL}/events`);
    expect(buildEventsBody([], 'tok')).toEqual({ data: [], access_token: 'tok' });
    expect(buildEventsBody([], 'tok', 'TEST_CNV')).toEqual({ data: [], test_event_code: 'TEST_CNV', access_token: 'tok' });
  });
});
