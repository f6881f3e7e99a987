import { describe, expect, it } from 'vitest';
import {
  buildIngestBody,
  conversionActionId,
  groupForIngest,
  MAX_EVENTS_PER_INGEST,
  prepareEvent,
  readDataManagerAccount,
  transactionIdFor,
  type PreparedEvent,
} from '../../../../src/server/destinations/google-ads/data-manager-request';
import { input } from './inputs';

const account = { customerId: '1234567890', loginCustomerId: null };
const EMAIL_HASH = '509e933019bb285a134a9334b8bb679dff79d0ce023d529af4bd744d47b4fd8a';

function ready(i = input()): PreparedEvent {
  const p = prepareEvent(i, account);
  if (!p.ok) throw new Error(`not prepared: ${JSON.stringify(p.outcome)}`);
  return p.prepared;
}

describe('the Data Manager ingest request', () => {
  it('builds the destination and event Google documents, with a hashed email and HEX encoding', () => {
    const p = ready();
    expect(buildIngestBody(p.destination, [p.event])).toEqual({
      destinations: [{ operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, productDestinationId: '555' }],
      events: [
        {
          transactionId: transactionIdFor(input()),
          eventTimestamp: '2026-11-21T09:30:00.000Z',
          eventSource: 'WEB',
          adIdentifiers: { gclid: 'Cj0KCQ-test-gclid' },
          userData: { userIdentifiers: [{ emailAddress: EMAIL_HASH }] },
          consent: { adUserData: 'CONSENT_GRANTED' },
        },
      ],
      encoding: 'HEX',
    });
  });

  it('names the manager account as login account when the connection goes through one', () => {
    const p = prepareEvent(input(), { customerId: '1234567890', loginCustomerId: '9876543210' });
    expect(p.ok && p.prepared.destination.loginAccount).toEqual({ accountType: 'GOOGLE_ADS', accountId: '9876543210' });
  });

  it('reads the account from the connection settings, dashes or not', () => {
    expect(readDataManagerAccount({ customer_id: '123-456-7890', login_customer_id: '987-654-3210' })).toEqual({ customerId: '1234567890', loginCustomerId: '9876543210' });
    expect(readDataManagerAccount({ customer_id: '12' })).toBeNull();
  });

  it('takes the conversion action id as a number, a numeric string or a resource name', () => {
    expect(conversionActionId({ conversion: { id: 555 } })).toBe('555');
    expect(conversionActionId({ conversion: { id: 'customers/1234567890/conversionActions/777' } })).toBe('777');
    expect(conversionActionId({ conversion: { id: 'signup' } })).toBeNull();
  });

  it('sends exactly one click id, gclid before gbraid before wbraid', () => {
    expect(ready(input({ clickIds: { wbraid: 'w', gbraid: 'g', gclid: 'c' } })).event.adIdentifiers).toEqual({ gclid: 'c' });
    expect(ready(input({ clickIds: { wbraid: 'w', gbraid: 'g' } })).event.adIdentifiers).toEqual({ gbraid: 'g' });
    expect(ready(input({ clickIds: { wbraid: 'w', fbclid: 'f' } })).event.adIdentifiers).toEqual({ wbraid: 'w' });
  });

  it('maps consent signals and leaves out the ones the page never gave', () => {
    expect(ready(input({ consent: { ad_user_data: 'granted', ad_personalization: 'denied' } })).event.consent).toEqual({
      adUserData: 'CONSENT_GRANTED',
      adPersonalization: 'CONSENT_DENIED',
    });
    expect(ready(input({ consent: { ad_user_data: null, ad_personalization: null } })).event.consent).toBeUndefined();
  });

  it('sends no hashed identifier when the visitor denied ad user data', () => {
    const p = ready(input({ consent: { ad_user_data: 'denied', ad_personalization: null } }));
    expect(p.event.userData).toBeUndefined();
    expect(p.event.adIdentifiers).toEqual({ gclid: 'Cj0KCQ-test-gclid' });
  });

  it('keeps the transaction id stable per event action so a resend is a duplicate', () => {
    expect(ready().event.transactionId).toBe(ready().event.transactionId);
    expect(ready(input({ eventActionId: 'eva_2' })).event.transactionId).not.toBe(ready().event.transactionId);
    expect(ready().event.transactionId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('fails for good an event with no click id and no identifier, with a plain hint', () => {
    const p = prepareEvent(input({ clickIds: {}, identity: { first_name: 'Alex' } }), account);
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.outcome.kind).toBe('failed');
    if (p.outcome.kind !== 'failed') return;
    expect(p.outcome.error.code).toBe('no_identifiers');
    expect(p.outcome.error.hint).toMatch(/gclid/);
  });

  it('fails for good an action without a conversion action id', () => {
    const p = prepareEvent(input({ actionConfig: {} }), account);
    expect(!p.ok && p.outcome.kind === 'failed' && p.outcome.error.code).toBe('conversion_action_missing');
  });

  it('summarises the request with kinds, hashes and ids only', () => {
    const summary = ready(input({ identity: { email: 'alexz@example.com', phone: '+18005550100', first_name: 'Alex' } })).summary;
    const text = JSON.stringify(summary);
    expect(text).not.toMatch(/alexz|18005550100|Alex/);
    expect(summary).toMatchObject({
      operatingAccountId: '1234567890',
      productDestinationId: '555',
      clickIdKind: 'gclid',
      clickId: 'Cj0KCQ-test-gclid',
      userIdentifiers: [{ kind: 'email', sha256: EMAIL_HASH }, { kind: 'phone' }],
    });
  });

  it('puts each conversion action in its own requests of at most the documented 2,000 events', () => {
    const items = Array.from({ length: MAX_EVENTS_PER_INGEST + 1 }, (_, n) => ({ position: n, prepared: ready(input({ eventActionId: `eva_${n}` })) }));
    items.push({ position: items.length, prepared: ready(input({ actionConfig: { conversion: { id: '666' } } })) });
    const groups = groupForIngest(items);
    expect(groups.map((g) => [g.destination.productDestinationId, g.items.length])).toEqual([
      ['555', 2000],
      ['555', 1],
      ['666', 1],
    ]);
  });

  it('marks a validate-only body', () => {
    const p = ready();
    expect(buildIngestBody(p.destination, [p.event], { validateOnly: true }).validateOnly).toBe(true);
  });
});
