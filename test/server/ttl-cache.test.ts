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
