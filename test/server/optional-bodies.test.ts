/** A route whose body is optional takes no body, or an empty one, on every route; a required body is still required. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from './support/harness';
import { upsertDestination } from '../../src/server/destinations/sql';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => {
  await svc.close();
});

describe('optional request bodies', () => {
  const bodies = [
    ['no body, no content-type', {}, undefined],
    ['an empty JSON body', { 'content-type': 'application/json' }, ''],
  ] as const;

  it.each(bodies)('POST /v1/dashboard/sign-in-links with %s makes a link', async (_name, headers, payload) => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/dashboard/sign-in-links', headers: { ...svc.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ url: expect.stringContaining('/dashboard/sign-in?token=') });
  });

  it.each(bodies)('POST /v1/destinations/{id}/test with %s tests the connection', async (_name, headers, payload) => {
    const destination = await upsertDestination(svc.db, svc.accountId, 'meta', { pixel_id: '1234567890123456' }, null);
    const res = await svc.app.inject({ method: 'POST', url: `/v1/destinations/${destination.id}/test`, headers: { ...svc.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ destination: destination.id, ok: false });
  });

  it('still refuses a missing body where one is required', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/flows', headers: svc.auth });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.type).toBe('invalid_request_error');
  });
});
