import { describe, expect, it } from 'vitest';
import { newApiKey, newId, newSiteKey, newUrlToken, newWebhookSecret } from '../../src/server/db/ids';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('ids and secrets', () => {
  it('have their documented shapes', () => {
    expect(newId('evt')).toMatch(/^evt_[0-9A-Za-z]{20}$/);
    expect(newSiteKey()).toMatch(/^[0-9a-z]{12}$/);
    expect(newApiKey()).toMatch(/^cnv_sk_[0-9A-Za-z]{32}$/);
    expect(newWebhookSecret()).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(newUrlToken()).toMatch(/^[0-9A-Za-z]{32}$/);
  });

  it('never repeat, across many refills of the random pool, and use the whole alphabet evenly', () => {
    // 20,000 ids draw about 430 KB of random bytes: a hundred refills of the 4 KiB pool.
    const ids = Array.from({ length: 20_000 }, () => newId('act').slice(4));
    expect(new Set(ids).size).toBe(ids.length);
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect([...counts.keys()].sort().join('')).toBe([...BASE62].sort().join(''));
    // 400,000 characters over 62: about 6,452 each; a biased draw (e.g. modulo bias towards the first 8) would stray far.
    for (const n of counts.values()) expect(Math.abs(n - 400_000 / 62)).toBeLessThan(500);
  });
});
