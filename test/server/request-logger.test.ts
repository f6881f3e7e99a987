/**
 * Each request's logger is made when the request first logs (lazyChildLogger): what a route logs still carries the
 * request's id and its own bindings, levels still filter, and the service's redaction still applies.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../src/server/http/app';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe("a request's logger", () => {
  it('logs with the request id at enabled levels only, makes children with both bindings, and keeps the redaction', async () => {
    const log = capture();
    const app = createHttpApp({ level: 'info', stream: log.stream });
    app.get('/logs', async (request) => {
      request.log.debug({ step: 'hidden' }, 'below the level');
      expect((request.log as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled('debug')).toBe(false);
      expect(request.log.level).toBe('info');
      request.log.info({ step: 'one', authorization: 'Bearer sk_live_secret' }, 'first line');
      request.log.child({ part: 'inner' }).warn('from a child');
      return { ok: true };
    });
    app.get('/quiet', async () => ({ ok: true }));
    await app.ready();
    try {
      const first = await app.inject({ method: 'GET', url: '/logs' });
      const second = await app.inject({ method: 'GET', url: '/logs' });
      expect(first.statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/quiet' })).statusCode).toBe(200);
      const lines = log.lines().filter((line) => line.reqId !== undefined);
      expect(lines.map((line) => line.msg)).toEqual(['first line', 'from a child', 'first line', 'from a child']);
      expect(lines[0]).toMatchObject({ step: 'one', level: 30 });
      expect(lines[1]).toMatchObject({ part: 'inner', level: 40, reqId: lines[0]!.reqId });
      expect(lines[2]!.reqId).not.toBe(lines[0]!.reqId);
      expect(JSON.stringify(lines)).not.toContain('sk_live_secret');
      expect(second.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("follows a route's own log level", async () => {
    const log = capture();
    const app = createHttpApp({ level: 'warn', stream: log.stream });
    app.get('/verbose', { logLevel: 'debug' }, async (request) => {
      request.log.debug('route at debug');
      return { ok: true };
    });
    await app.ready();
    try {
      await app.inject({ method: 'GET', url: '/verbose' });
      expect(log.lines().map((line) => line.msg)).toContain('route at debug');
    } finally {
      await app.close();
    }
  });
});
