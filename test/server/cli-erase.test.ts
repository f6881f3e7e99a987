/** `cnv erase` on the store (both kinds) and beside a running service (CNV_API_KEY): the same erasure as POST /v1/erasures. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, json, type RestService } from './support/rest-harness';
import { cnv } from './support/cli-harness';
import { newId } from '../../src/server/db/ids';

/** `cnv …` with the service's secret key set, as the erasure commands need it. */
function cnvWithKey(argv: string[], options: Parameters<typeof cnv>[1] = {}) {
  return cnv(argv, { ...options, env: { CNV_SECRET_KEY: '5'.repeat(64), ...options?.env } });
}

describe.each(DATABASE_KINDS)('cnv erase on $name', (kind) => {
  let svc: RestService;
  let base: string;
  beforeAll(async () => {
    svc = await createRestService(kind);
    base = await svc.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => svc.close());

  async function seedReport(email: string, phone: string | null): Promise<string> {
    const id = newId('rpt');
    await svc.db.query(
      `insert into reports (id, site_id, customer_event_id, trigger_key, identity, response) values ($1, $2, $3, 'signup', $4, '{}')`,
      [id, svc.site.id, id, JSON.stringify({ email, ...(phone ? { phone } : {}) })],
    );
    return id;
  }

  it('erases by email on the store, prints counts but not the value, and recognises a repeat', async () => {
    const report = await seedReport('Grace@Example.com', null);
    const first = await cnvWithKey(['erase', '--email', 'grace@example.com', '--account', svc.accountId], { db: svc.db });
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/Erasure era_\w+ .*by email:\n {2}reports: {11}1\n/);
    expect(first.out).not.toContain('grace');
    expect((await svc.db.query<{ identity: object }>('select identity from reports where id = $1', [report]))[0]!.identity).toEqual({});
    const again = await cnvWithKey(['erase', '--email', 'GRACE@example.com ', '--account', svc.accountId], { db: svc.db });
    expect(again.out).toMatch(/reports: {11}0\n/);
    expect(again.out).toMatch(/The same person was erased before \(era_/);
    // What the CLI recorded is what the REST list shows.
    expect(json(await svc.app.inject({ method: 'GET', url: '/v1/erasures', headers: svc.auth })).data).toHaveLength(2);
  });

  it('asks the running service when CNV_API_KEY is set', async () => {
    await seedReport('linus@example.com', '+1 202 555 0143');
    const res = await cnvWithKey(['erase', '--phone', '+12025550143'], { env: { CNV_API_KEY: svc.apiKey, CNV_API_URL: base } });
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/by phone:\n {2}reports: {11}1\n/);
    const bad = await cnvWithKey(['erase', '--phone', '202 555 0143'], { env: { CNV_API_KEY: svc.apiKey, CNV_API_URL: base } });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/phone must be a phone number with its country code/);
  });

  it('refuses a command line that names nobody or a malformed value (exit 2), erasing nothing', async () => {
    const none = await cnvWithKey(['erase', '--account', svc.accountId], { db: svc.db });
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/give --email, --phone or --customer-id/);
    const bad = await cnvWithKey(['erase', '--email', 'not-an-address', '--account', svc.accountId], { db: svc.db });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/email must be one email address/);
  });
});
