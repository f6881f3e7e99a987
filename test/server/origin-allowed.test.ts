import { describe, expect, it } from 'vitest';
import { MAX_ORIGIN_ANSWERS, MAX_REMEMBERED_ORIGIN_LENGTH, originAllowed, rememberedOriginAnswers } from '../../src/server/collector/config';
import { originMatchesDomain } from '../../src/protocol/origin';

// originAllowed remembers its answers by domain and origin (the collector asks on every snapshot): a remembered
// answer must be the rule's own, for whichever domain the site has now.
describe('originAllowed', () => {
  it('answers by the site\'s current domain, not by what an earlier question remembered', () => {
    const origin = 'https://app.example.com';
    expect(originAllowed({ domain: 'https://example.com' }, origin)).toBe(true);
    expect(originAllowed({ domain: 'https://other.example' }, origin)).toBe(false);
    expect(originAllowed({ domain: null }, origin)).toBe(false);
    expect(originAllowed({ domain: 'https://example.com' }, origin)).toBe(true);
    expect(originAllowed({ domain: 'https://example.com' }, undefined)).toBe(false);
    expect(originAllowed({ domain: 'http://example.com' }, origin)).toBe(false);
    expect(originAllowed({ domain: 'https://example.com' }, 'https://example.com:8443')).toBe(false);
    expect(originAllowed({ domain: 'https://example.com' }, 'null')).toBe(false);
  });

  it('gives the rule\'s answer for every question, also past the bound on what it remembers', () => {
    const domain = 'https://example.com';
    for (let i = 0; i < MAX_ORIGIN_ANSWERS + 50; i++) {
      const origin = i % 3 === 0 ? `https://s${i}.example.com` : i % 3 === 1 ? `https://s${i}.example.org` : `https://x ${i}`;
      expect(originAllowed({ domain }, origin)).toBe(originMatchesDomain(domain, origin));
    }
    expect(originAllowed({ domain }, 'https://www.example.com')).toBe(true);
    expect(originAllowed({ domain }, 'https://evil-example.com')).toBe(false);
    expect(rememberedOriginAnswers()).toBeLessThanOrEqual(MAX_ORIGIN_ANSWERS);
  });

  it('answers an Origin header longer than any real origin without remembering it', () => {
    const domain = 'https://example.com';
    const long = `https://${'a'.repeat(MAX_REMEMBERED_ORIGIN_LENGTH)}.example.com`;
    const held = rememberedOriginAnswers();
    expect(originAllowed({ domain }, long)).toBe(true);
    expect(originAllowed({ domain }, `${long}.evil`)).toBe(false);
    expect(originAllowed({ domain }, `https://${'b'.repeat(12_000)}.example.org`)).toBe(false);
    expect(rememberedOriginAnswers()).toBe(held);
  });
});
