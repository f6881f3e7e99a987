/**
 * A dashboard session opened with a link an API key asked for (POST /v1/dashboard/sign-in-links, what `cnv dashboard`
 * does beside a running service) ends when that key is revoked, and so does a link it asked for and nobody used yet:
 * a leaked key stops at its revocation instead of living on as a week-long session that can make new keys. Sessions
 * from the operator's own links (the first start, `cnv dashboard` on the store) are not tied to any key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from './support/databases';
import { createRestService, type RestService } from './support/rest-harness';
import { issueApiKey, revokeApiKey } from '../../src/server/accounts';
import { issueSignInLink } from '../../src/server/dashboard/sessions';
import { pressSignIn } from './support/dashboard-sign-in';

describe.each(DATABASE_KINDS)('revoking an API key on $name', (kind) => {
  let svc: RestService;
  beforeAll(async () => {
    svc = await createRestService(kind);
  });
  afterAll(() => svc.close());

  const linkWith = async (key: string) => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/dashboard/sign-in-links', headers: { authorization: `Bearer ${key}` }, payload: {} });
    expect(res.statusCode).toBe(201);
    return new URL(res.json<{ url: string }>().url);
  };
  const signIn = async (link: URL) => {
    const res = await pressSignIn(svc.app, link);
    expect(res.statusCode).toBe(303);
    // The whole `name=value` pair: the service's public URL is https, so the name is the __Host- one.
    return String(res.headers['set-cookie']).split(';')[0]!;
  };
  const dashboard = (session: string) => svc.app.inject({ method: 'GET', url: '/', headers: { cookie: session } });

  it("ends the sessions and unused links the key asked for, and no other", async () => {
    const key = await issueApiKey(svc.db, svc.accountId, 'leaked');
    const session = await signIn(await linkWith(key.key));
    const unused = await linkWith(key.key);
    const operators = await signIn(new URL((await issueSignInLink(svc.db, svc.settings, svc.accountId)).url));
    const otherKey = await issueApiKey(svc.db, svc.accountId, 'kept');
    const otherSession = await signIn(await linkWith(otherKey.key));
    expect((await dashboard(session)).statusCode).toBe(200);

    expect(await revokeApiKey(svc.db, key.id)).toMatchObject({ id: key.id, revoked_at: expect.any(Date) });
    expect((await dashboard(session)).statusCode).toBe(401);
    const late = await svc.app.inject({ method: 'GET', url: unused.pathname + unused.search });
    expect(late.statusCode).toBe(404);
    expect((await dashboard(operators)).statusCode).toBe(200);
    expect((await dashboard(otherSession)).statusCode).toBe(200);
  });

  it('revokes a key once; revoking it again changes nothing and an unknown key is null', async () => {
    const key = await issueApiKey(svc.db, svc.accountId);
    const first = await revokeApiKey(svc.db, key.id);
    const second = await revokeApiKey(svc.db, key.id);
    expect(second!.revoked_at).toEqual(first!.revoked_at);
    expect(await revokeApiKey(svc.db, 'key_nosuchkey')).toBeNull();
  });
});
