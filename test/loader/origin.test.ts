// @vitest-environment happy-dom
import { describe, expect, test } from 'vitest';
import { originMatchesDomain } from '../../src/protocol/origin';

// The loader's origin check is the protocol's originMatchesDomain(site domain, page origin).
describe('which page origins a site domain accepts', () => {
  const table: [domain: string | null, page: string, accepted: boolean][] = [
    ['https://example.com', 'https://example.com', true],
    ['https://example.com', 'https://www.example.com', true],
    ['https://example.com', 'https://app.example.com', true],
    ['https://example.com', 'https://a.b.example.com', true],
    ['https://www.example.com', 'https://app.example.com', false],
    ['https://www.example.com', 'https://example.com', false],
    ['https://example.com', 'https://notexample.com', false],
    ['https://example.com', 'https://example.com.evil.net', false],
    ['https://example.com', 'http://example.com', false],
    ['http://example.com', 'https://example.com', false],
    ['https://example.com', 'https://example.com:8443', false],
    ['https://example.com:8443', 'https://www.example.com:8443', true],
    ['https://example.com:443', 'https://example.com', true],
    ['http://example.com', 'http://example.com:80', true],
    ['https://EXAMPLE.com', 'https://www.Example.COM', true],
    [null, 'https://example.com', false],
    ['https://example.com', 'null', false],
    ['http://localhost:3000', 'http://localhost:3000', true],
    ['http://localhost:3000', 'http://localhost:3001', false],
  ];
  test.each(table)('domain %s, page %s: %s', (domain, page, accepted) => {
    expect(originMatchesDomain(domain, page)).toBe(accepted);
  });
});
