/**
 * A phone written with its national trunk prefix in parentheses after the country code (`+44 (0)20 7946 0958`, the
 * usual way in the UK, Germany, Switzerland, the Netherlands, Australia…) is the same number as `+44 20 7946 0958`:
 * the `(0)` is dialled only from inside the country. cnv read it as part of the number (`+4402079460958`), so an
 * erasure by the phone as E.164 found none of the reports or form submissions that carried it written so (the person
 * stayed in the store), and an erasure given it so matched no report of the number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService, type Tenant } from './support/rest-harness';
import { connectApiTrigger, insertApiFlow, insertFormFlow, newToken, setSiteDomain, signedReport } from './support/fixtures';
import { formSubmissionsPath } from '../../src/protocol/forms';
import { SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { normalizePhoneE164 } from '../../src/protocol/identity';

const ORIGIN = 'https://www.example.com';
const SECRET = 'whsec_trunk_prefix_secret_0123456789';

describe('a phone with its trunk prefix in parentheses', () => {
  it.each([
    ['+44 (0)20 7946 0958', '+442079460958'],
    ['+44 (0) 20 7946 0958', '+442079460958'],
    ['0049 (0)30 9876543', '+49309876543'],
    ['+41(0)44 668 18 00', '+41446681800'],
    // Parentheses around anything else are only grouping, as before.
    ['+49 (30) 987-6543', '+49309876543'],
    ['+1 (800) 555-0100', '+18005550100'],
  ])('%s is %s', (raw, e164) => {
    expect(normalizePhoneE164(raw)).toBe(e164);
  });
});

describe.each(DATABASE_KINDS)('erasure by a phone written with (0) on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  const report = (who: Tenant, body: Record<string, unknown>) =>
    svc.app.inject(signedReport(who.site.site_key, 'signup', { allow_uncorrelated: true, correlation_token: null, ...body }, SECRET));
  const formSubmission = (who: Tenant, phone: string) =>
    svc.app.inject({
      method: 'POST',
      url: formSubmissionsPath(who.site.site_key),
      headers: { 'content-type': SNAPSHOT_CONTENT_TYPE, origin: ORIGIN },
      payload: JSON.stringify({
        submission_id: newToken(), integration: 'html', form_id: 'contact', occurred_at: new Date().toISOString(),
        page_url: `${ORIGIN}/contact`, referrer: null, touch: null, cookies: {}, consent: { ad_user_data: 'granted', ad_personalization: null },
        fields: { email: null, phone, first_name: null, last_name: null },
      }),
    });
  const erase = (who: Tenant, body: unknown) =>
    svc.app.inject({ method: 'POST', url: '/v1/erasures', headers: { ...who.auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const prepare = async (name: string) => {
    const who = await svc.addTenant(name);
    await setSiteDomain(svc.db, who.site.id, ORIGIN);
    await connectApiTrigger(svc.db, { id: who.site.id, account_id: who.accountId }, SECRET);
    await insertApiFlow(svc.db, { id: who.site.id, account_id: who.accountId }, { triggerKey: 'signup' });
    await insertFormFlow(svc.db, { id: who.site.id, account_id: who.accountId }, 'html');
    return who;
  };
  const storedPhones = async (who: Tenant) => {
    const rows = await svc.db.query<{ phone: string | null }>(
      `select r.identity ->> 'phone' as phone from reports r where r.site_id = $1
       union all select f.fields ->> 'phone' from form_submissions f where f.site_id = $1`,
      [who.site.id],
    );
    return rows.map((r) => r.phone).filter((p) => p !== null);
  };

  it('erases what was stored as +44 (0)20 … when asked for +44 20 7946 0958', async () => {
    const who = await prepare('Trunk stored');
    expect((await report(who, { customer_event_id: 'signup-trunk', phone: '+44 (0)20 7946 0958' })).statusCode).toBe(200);
    expect((await formSubmission(who, '+44 (0) 20 7946 0958')).statusCode).toBe(204);
    const res = await erase(who, { phone: '+44 20 7946 0958' });
    expect(res.statusCode).toBe(200);
    expect(json(res).matched).toMatchObject({ reports: 1, form_submissions: 1 });
    expect(await storedPhones(who)).toEqual([]);
  });

  it('erases what was stored as +44 20 7946 0958 when asked for +44 (0)20 7946 0958', async () => {
    const who = await prepare('Trunk asked');
    expect((await report(who, { customer_event_id: 'signup-plain', phone: '+44 20 7946 0958' })).statusCode).toBe(200);
    const res = await erase(who, { phone: '+44 (0)20 7946 0958' });
    expect(json(res).matched).toMatchObject({ reports: 1 });
    expect(await storedPhones(who)).toEqual([]);
  });
});
