import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../src/server/db/ttl-cache';

/** A cache over a counting loader and a hand-moved clock. */
function setup(rows: Map<string, string>, ttlMs = 1000) {
  let now = 0;
  const loads: string[] = [];
  const cache = new TtlCache<string, string>(
    async (key) => {
      loads.push(key);
      return rows.get(key) ?? null;
    },
    { ttlMs, clock: () => now },
  );
  return { cache, loads, advance: (ms: number) => (now += ms) };
}

describe('TtlCache', () => {
  it('reuses a loaded value until the TTL has passed, then loads it again', async () => {
    const { cache, loads, advance } = setup(new Map([['a', 'A']]));
    expect(await cache.get('a')).toBe('A');
    advance(999);
    expect(await cache.get('a')).toBe('A');
    expect(loads).toEqual(['a']);
    advance(1);
    expect(await cache.get('a')).toBe('A');
    expect(loads).toEqual(['a', 'a']);
  });

  it('shares one load between concurrent misses of one key', async () => {
    const { cache, loads } = setup(new Map([['a', 'A']]));
    expect(await Promise.all([cache.get('a'), cache.get('a'), cache.get('a')])).toEqual(['A', 'A', 'A']);
    expect(loads).toEqual(['a']);
  });

  it('never caches an absent value, so a row created a moment ago is found at the next read', async () => {
    const rows = new Map<string, string>();
    const { cache, loads } = setup(rows);
    expect(await cache.get('a')).toBeNull();
    rows.set('a', 'A');
    expect(await cache.get('a')).toBe('A');
    expect(loads).toEqual(['a', 'a']);
  });

  it('never caches a failed load', async () => {
    let fail = true;
    const cache = new TtlCache<string, string>(async () => {
      if (fail) throw new Error('down');
      return 'A';
    }, { ttlMs: 1000, clock: () => 0 });
    await expect(cache.get('a')).rejects.toThrow('down');
    fail = false;
    expect(await cache.get('a')).toBe('A');
  });

  it('reads again on refresh, and `cached` answers only from what is fresh, without loading', async () => {
    const rows = new Map([['a', 'A']]);
    const { cache, loads, advance } = setup(rows);
    expect(cache.cached('a')).toBeNull();
    await cache.get('a');
    rows.set('a', 'B');
    expect(await cache.cached('a')).toBe('A');
    expect(await cache.refresh('a')).toBe('B');
    expect(await cache.cached('a')).toBe('B');
    advance(1000);
    expect(cache.cached('a')).toBeNull();
    expect(loads).toEqual(['a', 'a']);
  });
});

describe('TtlCache serving slow values stale while it reloads them', () => {
  /** A cache whose loads take `tookMs` on its clock (each load moves the clock), and resolve when the test says so. */
  function slowSetup(tookMs: () => number) {
    let now = 0;
    let version = 0;
    let failNext = false;
    const pending: Array<() => void> = [];
    const loads: number[] = [];
    const cache = new TtlCache<string, string>(
      (key) => {
        const started = now;
        loads.push(started);
        return new Promise<string | null>((resolve, reject) => {
          pending.push(() => {
            now = Math.max(now, started + tookMs());
            if (failNext) {
              failNext = false;
              reject(new Error('down'));
            } else resolve(key === 'gone' ? null : `${key}${++version}`);
          });
        });
      },
      { ttlMs: 1000, serveStale: { forMs: 5000, ifLoadTookMs: 100 }, clock: () => now },
    );
    /** Lets every pending load finish, and the cache see it. */
    const settle = async () => {
      while (pending.length > 0) pending.shift()!();
      await new Promise((r) => setTimeout(r, 0));
    };
    const first = async (key: string) => {
      const value = cache.get(key);
      await settle();
      return value;
    };
    return { cache, loads, settle, first, advance: (ms: number) => (now += ms), failNextLoad: () => (failNext = true) };
  }

  it('answers a slow value at once after its TTL, reloads it once in the background, then answers the new one', async () => {
    const { cache, loads, settle, first, advance } = slowSetup(() => 300);
    expect(await first('a')).toBe('a1');
    advance(1500); // past the TTL, within the stale period
    expect(await cache.get('a')).toBe('a1'); // answered without waiting: no load has finished
    expect(await cache.get('a')).toBe('a1');
    expect(loads).toHaveLength(2); // one reload for both
    await settle();
    expect(await cache.get('a')).toBe('a2');
    expect(loads).toHaveLength(2);
  });

  it('waits for a fresh load once the stale period has passed', async () => {
    const { cache, loads, settle, first, advance } = slowSetup(() => 300);
    await first('a');
    advance(300 + 1000 + 5000);
    const value = cache.get('a');
    await settle();
    expect(await value).toBe('a2');
    expect(loads).toHaveLength(2);
  });

  it('never serves stale a value that loaded faster than the rule', async () => {
    const { cache, settle, first, advance } = slowSetup(() => 20);
    await first('a');
    advance(1500);
    const value = cache.get('a');
    await settle();
    expect(await value).toBe('a2');
  });

  it('keeps the stale value when a background reload fails, and retries at the next read', async () => {
    const { cache, loads, settle, first, advance, failNextLoad } = slowSetup(() => 300);
    await first('a');
    advance(1500);
    failNextLoad();
    expect(await cache.get('a')).toBe('a1');
    await settle();
    expect(await cache.get('a')).toBe('a1');
    expect(loads).toHaveLength(3);
    await settle();
    expect(await cache.get('a')).toBe('a2');
  });

  it('forgets a key whose background reload finds nothing', async () => {
    let gone = false;
    let now = 0;
    const cache = new TtlCache<string, string>(
      async () => {
        now += 200;
        return gone ? null : 'A';
      },
      { ttlMs: 1000, serveStale: { forMs: 5000, ifLoadTookMs: 100 }, clock: () => now },
    );
    expect(await cache.get('a')).toBe('A');
    now += 1500;
    gone = true;
    expect(await cache.get('a')).toBe('A'); // stale, while the reload finds nothing
    await new Promise((r) => setTimeout(r, 0));
    expect(await cache.get('a')).toBeNull();
  });

  it('keeps a newer value loaded meanwhile over the background reload that finishes after it', async () => {
    const { cache, settle, first, advance } = slowSetup(() => 300);
    await first('a');
    advance(1500);
    expect(await cache.get('a')).toBe('a1'); // starts the background reload (a2, still pending)
    const refreshed = cache.refresh('a'); // a3, pending
    await settle();
    expect(await refreshed).toBe('a3');
    expect(await cache.get('a')).toBe('a3');
  });
});
