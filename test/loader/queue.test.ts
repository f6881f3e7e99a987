// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { boot } from '../../src/loader/boot';
import { drainQueue, type QueuedCall } from '../../src/loader/queue';
import { CLICK_COOKIE } from '../../src/protocol/cookies';
import { configFor, preparePage, resetPage, service, SITE_KEY } from './harness';

afterEach(resetPage);

describe('the queue of calls made before the loader', () => {
  test('replays calls in order, then runs later pushes at once', () => {
    const log: string[] = [];
    const q: QueuedCall[] = [['a', ['1']], ['b'], ['a', ['2']]];
    const api = { q, a: (x: string) => log.push(`a:${x}`), b: () => log.push('b') };
    drainQueue(api);
    expect(log).toEqual(['a:1', 'b', 'a:2']);
    expect(q).toHaveLength(0);
    q.push(['a', ['3']], ['b', []]);
    expect(log).toEqual(['a:1', 'b', 'a:2', 'a:3', 'b']);
  });

  test('creates q when the page set none', () => {
    const api: { q?: QueuedCall[]; a: () => void } = { a: () => {} };
    drainQueue(api);
    expect(Array.isArray(api.q)).toBe(true);
    expect(api.q).toHaveLength(0);
  });

  test('skips unknown methods and calls that throw, and goes on', () => {
    const log: string[] = [];
    const api = {
      q: [['nope', []], ['boom', []], 'garbage' as unknown as QueuedCall, ['ok', []]] as QueuedCall[],
      boom: () => {
        throw new Error('x');
      },
      ok: () => log.push('ok'),
    };
    drainQueue(api);
    expect(log).toEqual(['ok']);
  });

  test('the loader replays the page queue once it has decided, before ready resolves', async () => {
    const q: unknown[] = [['consent', [true]], ['captureSaasSignupIntent', []]];
    (window as unknown as { __service: unknown }).__service = { q };
    const page = preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'), {
      'data-site-key': SITE_KEY,
      'data-consent-required': '',
    });
    boot();
    expect(page.jar.writes).toEqual([]);
    await service()!.ready;
    expect(q).toHaveLength(0);
    expect(page.jar.get(CLICK_COOKIE)).toBeDefined();
    await page.flush();
    expect(page.beacons.map((b) => b.snapshot.trigger)).toEqual(['api']);
    q.push(['captureSaasSignupIntent', []]);
    await page.flush();
    expect(page.beacons).toHaveLength(2);
  });

  test('an inactive loader still drains the queue (its calls do nothing)', async () => {
    const q: unknown[] = [['captureSaasSignupIntent', []]];
    (window as unknown as { __service: unknown }).__service = { q };
    const page = preparePage('https://evil.example.net/', configFor('https://example.com'));
    boot();
    expect(await service()!.ready).toBe(false);
    expect(q).toHaveLength(0);
    await page.flush();
    expect(page.beacons).toEqual([]);
  });

  test('without a page queue, q is created so later pushes work, and do not stay queued', async () => {
    const page = preparePage('https://www.example.com/', configFor('https://example.com'));
    boot();
    await service()!.ready;
    service()!.q!.push(['captureSaasSignupIntent', []]);
    await page.flush();
    expect(page.beacons).toHaveLength(1);
    expect(service()!.q, "a pushed call runs and leaves the queue").toHaveLength(0);
  });
});
