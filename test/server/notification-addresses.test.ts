/**
 * Where notifications may go: an account chooses the URL, so unless the operator allows private addresses the service
 * sends only over https to public addresses, checked when the endpoint is made and, for a name, at every send (the
 * connection goes to the address that was checked). A service listening on loopback (a developer's) allows them.
 */
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { endpointUrlProblem, isPublicAddress, newEndpointUrlProblem } from '../../src/server/notifications/url';
import { sendNotification } from '../../src/server/notifications/sender';
import { loadSettings } from '../../src/server/settings';

const closed = { privateAddresses: false };
const open = { privateAddresses: true };

describe('public addresses', () => {
  it.each([
    '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '198.18.0.1', '224.0.0.1', '255.255.255.255', '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::10.0.0.1', 'not an address',
    // 6to4 of 127.0.0.1 and of 10.0.0.1 (RFC 3056), Teredo, NAT64's local-use prefix, a full-length mapped address.
    '2002:7f00:1::', '2002:0a00:0001:1::5', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '64:ff9b:1::a00:1', '0:0:0:0:0:ffff:7f00:1',
  ])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1'])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('an endpoint URL', () => {
  it('must be https to a public host unless private addresses are allowed', () => {
    expect(endpointUrlProblem('https://hooks.example.com/cnv', closed)).toBeNull();
    expect(endpointUrlProblem('https://93.184.216.34/cnv', closed)).toBeNull();
    for (const url of ['https://10.0.0.1/', 'https://169.254.169.254/latest/meta-data/', 'https://127.0.0.1:8787/v1/sites', 'https://[::1]/', 'https://[::ffff:127.0.0.1]/', 'https://localhost/', 'https://app.localhost/']) {
      expect(endpointUrlProblem(url, closed), url).toMatch(/public address/);
    }
    expect(endpointUrlProblem('http://hooks.example.com/', closed)).toBe('url must use https.');
    expect(endpointUrlProblem('http://127.0.0.1:9000/', closed)).toBe('url must use https.');
    expect(endpointUrlProblem('https://[2002:7f00:1::]/h', closed)).toMatch(/public address/);
    expect(endpointUrlProblem('https://localhost./h', closed)).toMatch(/public address/);
    expect(endpointUrlProblem('https://example.com:0/h', closed)).toMatch(/port 0/);
    // A new endpoint may not carry a fragment (never sent); one stored before the rule still sends.
    expect(newEndpointUrlProblem('https://hooks.example.com/cnv#prod', closed)).toMatch(/#fragment/);
    expect(newEndpointUrlProblem('https://hooks.example.com/cnv#', open)).toMatch(/#fragment/);
    expect(newEndpointUrlProblem('https://hooks.example.com/cnv?team=a%23b', closed)).toBeNull();
    expect(newEndpointUrlProblem('https://10.0.0.1/#x', closed)).toMatch(/public address/);
    expect(endpointUrlProblem('https://hooks.example.com/cnv#prod', closed)).toBeNull();
  });

  it('may reach loopback over http and private networks over https where they are allowed (development)', () => {
    expect(endpointUrlProblem('http://127.0.0.1:9000/hook', open)).toBeNull();
    expect(endpointUrlProblem('https://10.0.0.1/', open)).toBeNull();
    expect(endpointUrlProblem('http://10.0.0.1/', open)).toMatch(/must use https/);
  });
});

describe('sending to a name', () => {
  const resolvingTo = (address: string, family: 4 | 6 = 4) =>
    ((_host: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) => callback(null, [{ address, family }])) as never;
  const send = (url: string, lookup: never) =>
    sendNotification({ url, secret: 'whsec_' + Buffer.alloc(24, 1).toString('base64'), messageId: 'msg_1', body: '{}' }, {
      now: () => new Date('2026-11-27T12:00:00Z'), timeoutMs: 2_000, signal: new AbortController().signal, policy: { privateAddresses: false, lookup },
    });

  it('refuses one that resolves to a private address, before connecting', async () => {
    for (const [address, family] of [['127.0.0.1', 4], ['10.0.0.7', 4], ['169.254.169.254', 4], ['::1', 6]] as const) {
      const outcome = await send('https://internal.example.com/hook', resolvingTo(address, family));
      expect(outcome, address).toMatchObject({ ok: false, status: null, error: expect.stringContaining('resolves to a private address') });
    }
  });
});

describe('CNV_NOTIFICATION_PRIVATE_ADDRESSES', () => {
  it('is on by default for a service that listens on loopback only, off otherwise, and can be set either way', () => {
    expect(loadSettings({ CNV_DEMO_PORT: 'off' }).notificationPrivateAddresses).toBe(true);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', HOST: '::1' }).notificationPrivateAddresses).toBe(true);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', HOST: 'app.localhost' }).notificationPrivateAddresses).toBe(true);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', HOST: '0.0.0.0' }).notificationPrivateAddresses).toBe(false);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', HOST: '0.0.0.0', CNV_NOTIFICATION_PRIVATE_ADDRESSES: 'on' }).notificationPrivateAddresses).toBe(true);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', CNV_NOTIFICATION_PRIVATE_ADDRESSES: 'off' }).notificationPrivateAddresses).toBe(false);
    expect(() => loadSettings({ CNV_DEMO_PORT: 'off', CNV_NOTIFICATION_PRIVATE_ADDRESSES: 'maybe' })).toThrow(/CNV_NOTIFICATION_PRIVATE_ADDRESSES must be on or off/);
  });

  it('is off by default behind a proxy on the same machine: loopback, but with a public URL others reach it at', () => {
    // The usual production setup (a TLS proxy in front, the service on 127.0.0.1): every account of it could otherwise
    // have the service post to this machine and its private networks.
    expect(loadSettings({ CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example.com' }).notificationPrivateAddresses).toBe(false);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', CNV_WEBHOOK_BASE_URL: 'https://hooks.example.com' }).notificationPrivateAddresses).toBe(false);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', HOST: '::1', CNV_PUBLIC_URL: 'https://10.0.0.5:8443' }).notificationPrivateAddresses).toBe(false);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'http://localhost:8787/cnv' }).notificationPrivateAddresses).toBe(true);
    expect(loadSettings({ CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://cnv.example.com', CNV_NOTIFICATION_PRIVATE_ADDRESSES: 'on' }).notificationPrivateAddresses).toBe(true);
  });
});

describe('POST /v1/notification_endpoints behind a proxy on the same machine', () => {
  it('refuses an endpoint on this machine, a private network or the metadata address, by default', async () => {
    const { DATABASE_KINDS } = await import('./support/databases');
    const { createRestService } = await import('./support/rest-harness');
    // The harness's service: HOST left at its loopback default, public URLs on hosts others reach.
    const svc = await createRestService(DATABASE_KINDS[0]!);
    try {
      const post = (url: string) =>
        svc.app.inject({ method: 'POST', url: '/v1/notification_endpoints', headers: svc.auth, payload: { url, kinds: ['event.failed'] } });
      for (const url of ['http://127.0.0.1:5432/', 'https://169.254.169.254/latest/meta-data/', 'https://10.0.0.7/hook', 'http://localhost:6379/', 'https://hooks.example.com/cnv#prod']) {
        const refused = await post(url);
        expect(refused.statusCode, url).toBe(400);
        expect(refused.json(), url).toMatchObject({ error: { code: 'url_invalid', param: 'url' } });
      }
      expect((await svc.app.inject({ method: 'GET', url: '/v1/notification_endpoints', headers: svc.auth })).json().data).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});

describe('POST /v1/notification_endpoints with private addresses refused', () => {
  it('answers 400 url_invalid for an internal URL and makes nothing', async () => {
    const { DATABASE_KINDS } = await import('./support/databases');
    const { createRestService } = await import('./support/rest-harness');
    const svc = await createRestService(DATABASE_KINDS[0]!, { CNV_NOTIFICATION_PRIVATE_ADDRESSES: 'off' });
    try {
      const post = (url: string) =>
        svc.app.inject({ method: 'POST', url: '/v1/notification_endpoints', headers: svc.auth, payload: { url, kinds: ['event.failed'] } });
      const refused = await post('https://169.254.169.254/latest/meta-data/');
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: 'url_invalid', param: 'url' } });
      expect((await svc.app.inject({ method: 'GET', url: '/v1/notification_endpoints', headers: svc.auth })).json().data).toEqual([]);
      expect((await post('https://hooks.example.com/cnv')).statusCode).toBe(201);
    } finally {
      await svc.close();
    }
  });
});
