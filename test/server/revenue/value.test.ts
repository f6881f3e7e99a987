import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './support';
import { DEMO } from '../../../src/demo/setup';
import { saasSignupPath } from '../../../src/protocol/webhook';

describe('value on a signup report', () => {
  let r: RevenueService;
  let path: string;
  let seq = 0;
  const id = () => `cus_signup_${++seq}`;
  beforeAll(async () => {
    r = await startRevenueService();
    path = saasSignupPath(r.setup.site.site_key, DEMO.triggerKey);
  });
  afterAll(() => r.close());

  it('stores value, currency and customer_id and sends them to all four platforms in their own fields', async () => {
    const customerEventId = id();
    const res = await r.post(path, {
      customer_event_id: customerEventId, correlation_token: null, allow_uncorrelated: true, email: 'ada@example.com',
      value: 49.9, currency: 'EUR', customer_id: 'acct_42',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'promoted', promoted_count: 1, customer_event_id: customerEventId });
    await r.drain();

    const google = r.fakes.google.ingested().at(-1)!;
    expect(google.event).toMatchObject({ conversionValue: 49.9, currency: 'EUR' });
    const meta = r.fakes.meta.requests.at(-1)!;
    expect(meta.problems).toEqual([]);
    expect(meta.body.data[0].custom_data).toEqual({ value: 49.9, currency: 'EUR' });
    const microsoft = r.fakes.microsoft.requests.filter((q) => q.path.endsWith('/OfflineConversions/Apply')).at(-1)!;
    expect(microsoft.problems).toEqual([]);
    expect(microsoft.body.OfflineConversions[0]).toMatchObject({ ConversionValue: 49.9, ConversionCurrencyCode: 'EUR' });
    expect(r.fakes.linkedin.events.at(-1)!.conversionValue).toEqual({ currencyCode: 'EUR', amount: '49.9' });

    const events = await r.api('GET', `/v1/events?site_id=${r.setup.site.id}`);
    const event = events.data.find((e: any) => e.customer_event_id === customerEventId);
    expect(event).toMatchObject({ value: 49.9, currency: 'EUR', customer_id: 'acct_42', trigger_type: 'saas_signup', status: 'completed' });
    expect(event.actions.length).toBeGreaterThanOrEqual(4);
    for (const action of event.actions) expect(action.status).toBe('delivered');
  });

  it('sends no value fields when the report has none', async () => {
    const customerEventId = id();
    expect((await r.post(path, { customer_event_id: customerEventId, correlation_token: null, allow_uncorrelated: true, email: 'bo@example.com' })).status).toBe(200);
    await r.drain();
    expect(r.fakes.google.ingested().at(-1)!.event.conversionValue).toBeUndefined();
    expect(r.fakes.meta.requests.at(-1)!.body.data[0].custom_data).toBeUndefined();
    expect(r.fakes.linkedin.events.at(-1)!.conversionValue).toBeNull();
  });

  it.each([
    [29.9 * 1.19, 35.581],
    [100 * 1.1, 110],
    [0.1 + 0.2, 0.3],
    [1234567.89 * 1.19 * 3, 4407407.3673],
  ])('takes %s (float arithmetic on an amount) as %s, stored and sent rounded', async (value, rounded) => {
    const customerEventId = id();
    const res = await r.post(path, { customer_event_id: customerEventId, correlation_token: null, allow_uncorrelated: true, email: 'cy@example.com', value, currency: 'EUR' });
    expect(res.status).toBe(200);
    await r.drain();
    expect(r.fakes.google.ingested().at(-1)!.event.conversionValue).toBe(rounded);
    expect(r.fakes.meta.requests.at(-1)!.body.data[0].custom_data.value).toBe(rounded);
    expect(r.fakes.linkedin.events.at(-1)!.conversionValue?.amount).toBe(String(rounded));
    const events = await r.api('GET', `/v1/events?site_id=${r.setup.site.id}`);
    expect(events.data.find((e: any) => e.customer_event_id === customerEventId).value).toBe(rounded);
  });

  it('refuses a currency in small letters, saying to send it in capitals', async () => {
    const res = await r.post(path, { customer_event_id: id(), correlation_token: null, allow_uncorrelated: true, value: 10, currency: 'eur' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'currency' });
    expect(res.body.error.message).toMatch(/use EUR/);
  });

  it('says when a value has too many decimals, and states the rule for any other refused value', async () => {
    const why = async (value: unknown) =>
      (await r.post(path, { customer_event_id: id(), correlation_token: null, allow_uncorrelated: true, value, currency: 'EUR' })).body.error.message as string;
    const rule = 'Expected: a number from 0 to 1000000000 with at most 6 decimals';
    expect(await why(1.2345678)).toContain(`'value': it has more than 6 decimals. ${rule}`);
    for (const value of [-1, 1e10, '10']) {
      const message = await why(value);
      expect(message, String(value)).toContain(rule);
      expect(message, String(value)).not.toContain('it has more than');
    }
  });

  it.each([
    [{ value: -1, currency: 'EUR' }, 'value'],
    [{ value: 1_000_000_000.5, currency: 'EUR' }, 'value'],
    [{ value: 1.1234567, currency: 'EUR' }, 'value'],
    [{ value: 1.2345678, currency: 'EUR' }, 'value'],
    [{ value: 0.00000005, currency: 'EUR' }, 'value'],
    [{ value: '10', currency: 'EUR' }, 'value'],
    [{ value: 10 }, 'currency'],
    [{ value: 10, currency: 'eur' }, 'currency'],
    [{ value: 10, currency: 'XYZ' }, 'currency'],
    [{ value: 10, currency: 'HRK' }, 'currency'],
    [{ value: 10, currency: 'BGN' }, 'currency'],
    [{ value: 10, currency: 'XAU' }, 'currency'],
    [{ value: 10, currency: 978 }, 'currency'],
    [{ customer_id: '' }, 'customer_id'],
    [{ customer_id: '   ' }, 'customer_id'],
    [{ customer_id: 'x'.repeat(201) }, 'customer_id'],
    [{ customer_id: '😀'.repeat(201) }, 'customer_id'],
    [{ customer_id: 42 }, 'customer_id'],
    [{ customer_id: 'a\ud800' }, 'customer_id'],
  ])('refuses %j with a 400 naming %s, storing nothing', async (fields, param) => {
    const customerEventId = id();
    const res = await r.post(path, { customer_event_id: customerEventId, correlation_token: null, allow_uncorrelated: true, ...fields });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    const rows = await r.svc.db.query('select id from reports where customer_event_id = $1', [customerEventId]);
    expect(rows).toEqual([]);
  });

  it('takes the limits: 0, 1e9, six decimals, null fields, 200 characters of customer_id however many UTF-16 units', async () => {
    for (const fields of [{ customer_id: '😀'.repeat(200) }, { value: 0, currency: 'USD' }, { value: 1_000_000_000, currency: 'JPY' }, { value: 0.000001, currency: 'EUR' }, { value: null, currency: null, customer_id: null }]) {
      const res = await r.post(path, { customer_event_id: id(), correlation_token: null, allow_uncorrelated: true, ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(200);
    }
  });
});
