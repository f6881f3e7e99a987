import { createServer, request as httpRequest, IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCnvClient, readCorrelationToken, type ReportSignupResult } from '../../src/client';
import { cookieValues } from '../../src/client/cookie-header';
import { lookupCorrelationToken } from '../../src/client/correlation';
import { CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { startFakeWebhook, type FakeWebhook } from './fake-webhook';

const TOKEN = 'Abcdefghijklmnopqrstuv';
const OTHER_TOKEN = 'Zyxwvutsrqponmlkjihg_-';
const SECRET = 'whsec_cookie_tests_000000000000000';

describe('cookieValues: parsing a Cookie header', () => {
  it('finds a cookie among several, with or without spaces after the semicolons', () => {
    expect(cookieValues(`a=1; ${CORRELATION_COOKIE}=${TOKEN}; b=2`, CORRELATION_COOKIE)).toEqual([TOKEN]);
    expect(cookieValues(`a=1;${CORRELATION_COOKIE}=${TOKEN};b=2`, CORRELATION_COOKIE)).toEqual([TOKEN]);
    expect(cookieValues(`  ${CORRELATION_COOKIE} = ${TOKEN}  `, CORRELATION_COOKIE)).toEqual([TOKEN]);
  });

  it('matches the whole name, case-sensitively', () => {
    expect(cookieValues(`x${CORRELATION_COOKIE}=1; ${CORRELATION_COOKIE.toUpperCase()}=2`, CORRELATION_COOKIE)).toEqual([]);
  });

  it('percent-decodes values and unquotes quoted ones', () => {
    expect(cookieValues('n=a%20b%3Bc', 'n')).toEqual(['a b;c']);
    expect(cookieValues('n="quoted value"', 'n')).toEqual(['quoted value']);
    expect(cookieValues('n="%41"', 'n')).toEqual(['A']);
  });

  it('keeps a value with broken percent-encoding as it is', () => {
    expect(cookieValues('n=100%; m=%E0%A4%A', 'n')).toEqual(['100%']);
    expect(cookieValues('n=100%; m=%E0%A4%A', 'm')).toEqual(['%E0%A4%A']);
  });

  it('keeps an equals sign inside a value and skips pairs without one', () => {
    expect(cookieValues('junk; n=a=b; ;=x', 'n')).toEqual(['a=b']);
  });

  it('returns every value of a repeated name, in order, and accepts a header array', () => {
    expect(cookieValues(['n=1; m=0', 'n=2'], 'n')).toEqual(['1', '2']);
    expect(cookieValues(undefined, 'n')).toEqual([]);
    expect(cookieValues('', 'n')).toEqual([]);
  });
});

describe('lookupCorrelationToken', () => {
  it('takes the first value that has the shape of a token', () => {
    expect(lookupCorrelationToken(`${CORRELATION_COOKIE}=garbage; ${CORRELATION_COOKIE}=${TOKEN}; ${CORRELATION_COOKIE}=${OTHER_TOKEN}`)).toEqual({
      token: TOKEN,
      problem: null,
    });
  });

  it('says malformed when the cookie is there but holds no token, and missing when it is not there', () => {
    expect(lookupCorrelationToken(`${CORRELATION_COOKIE}=${TOKEN}x`)).toEqual({ token: null, problem: 'malformed' });
    expect(lookupCorrelationToken(`${CORRELATION_COOKIE}=`)).toEqual({ token: null, problem: 'malformed' });
    expect(lookupCorrelationToken('other=1')).toEqual({ token: null, problem: 'missing' });
  });

  it('accepts a quoted token', () => {
    expect(lookupCorrelationToken(`${CORRELATION_COOKIE}="${TOKEN}"`).token).toBe(TOKEN);
  });
});

describe('readCorrelationToken: from what a backend has at hand', () => {
  it('reads a raw Cookie header string', () => {
    expect(readCorrelationToken(`theme=dark; ${CORRELATION_COOKIE}=${TOKEN}`)).toBe(TOKEN);
    expect(readCorrelationToken('theme=dark')).toBeNull();
    expect(readCorrelationToken(null)).toBeNull();
  });

  it('reads a Fetch API Request', () => {
    const request = new Request('https://app.example.com/signup', { method: 'POST', headers: { cookie: `${CORRELATION_COOKIE}=${TOKEN}` } });
    expect(readCorrelationToken(request)).toBe(TOKEN);
    expect(readCorrelationToken(new Request('https://app.example.com/'))).toBeNull();
  });

  it('reads a Node IncomingMessage', () => {
    const message = new IncomingMessage(new Socket());
    message.headers = { cookie: `a=b; ${CORRELATION_COOKIE}=${TOKEN}` };
    expect(readCorrelationToken(message)).toBe(TOKEN);
  });

  it('reads anything with headers.cookie', () => {
    expect(readCorrelationToken({ headers: { cookie: `${CORRELATION_COOKIE}=${TOKEN}` } })).toBe(TOKEN);
    expect(readCorrelationToken({ headers: { Cookie: `${CORRELATION_COOKIE}=${TOKEN}` } })).toBe(TOKEN);
    expect(readCorrelationToken({ headers: {} })).toBeNull();
  });

  it('answers null, never throws, for what untyped code may pass', () => {
    expect(readCorrelationToken(5 as never)).toBeNull();
    expect(readCorrelationToken({ headers: { cookie: 5 } } as never)).toBeNull();
    expect(readCorrelationToken({ headers: { cookie: [5, `${CORRELATION_COOKIE}=${TOKEN}`] } } as never)).toBe(TOKEN);
  });
});

describe('reportSignup: the token travels from the signup request to the webhook', () => {
  let hook: FakeWebhook;
  beforeEach(async () => {
    hook = await startFakeWebhook(SECRET);
  });
  afterEach(async () => {
    await hook.close();
  });

  function client() {
    return createCnvClient({ webhookBaseUrl: hook.baseUrl, siteKey: 'sk_1', triggerKey: 'signup', secret: SECRET });
  }

  it('reads the cookie of a real Node request in a backend handler', async () => {
    const cnv = client();
    let result: ReportSignupResult | undefined;
    const app = createServer((req, res) => {
      void cnv.reportSignup({ request: req, customerEventId: 'user_7' }).then((r) => {
        result = r;
        res.end('welcome');
      });
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const { port } = app.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/signup', method: 'POST', headers: { cookie: `session=abc; ${CORRELATION_COOKIE}=${TOKEN}` } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end('email=a%40b.co');
    });
    await new Promise<void>((resolve) => app.close(() => resolve()));
    expect(result).toMatchObject({ ok: true, correlationToken: TOKEN });
    expect(hook.requests[0]!.json.correlation_token).toBe(TOKEN);
  });

  it('reads the cookie of a Fetch Request, as in a Next.js route handler', async () => {
    const request = new Request('https://app.example.com/api/signup', { method: 'POST', headers: { cookie: `${CORRELATION_COOKIE}=${TOKEN}` } });
    const result = await client().reportSignup({ request, customerEventId: 'user_8' });
    expect(result).toMatchObject({ ok: true, correlationToken: TOKEN });
    expect(hook.requests[0]!.json.correlation_token).toBe(TOKEN);
  });

  it('prefers an explicit correlationToken over the cookie, then the cookie header over the request', async () => {
    const request = { headers: { cookie: `${CORRELATION_COOKIE}=${TOKEN}` } };
    await client().reportSignup({ request, correlationToken: OTHER_TOKEN, customerEventId: 'a' });
    await client().reportSignup({ request, cookieHeader: `${CORRELATION_COOKIE}=${OTHER_TOKEN}`, customerEventId: 'b' });
    expect(hook.requests.map((r) => r.json.correlation_token)).toEqual([OTHER_TOKEN, OTHER_TOKEN]);
  });

  it('treats an explicit null correlationToken as no token, whatever the cookie says', async () => {
    const request = { headers: { cookie: `${CORRELATION_COOKIE}=${TOKEN}` } };
    const result = await client().reportSignup({ request, correlationToken: null, customerEventId: 'a' });
    expect(result).toMatchObject({ ok: false, sent: false, reason: 'no_correlation_token' });
    expect(hook.requests).toHaveLength(0);
  });
});
