// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { pageService, publishService } from '../../src/loader/api';
import { resetPage, service } from './harness';

afterEach(resetPage);

const api = () => ({ captureSaasSignupIntent: async () => null, consent: () => {} });

describe('window.__service', () => {
  test('is created when the page set none', () => {
    expect(pageService()).toEqual({});
    const published = publishService(pageService(), api());
    expect(service()).toBe(published);
    expect(Object.keys(published).sort()).toEqual(['captureSaasSignupIntent', 'consent']);
  });

  test('a window.__service that is not an object is not used', () => {
    (window as unknown as { __service: unknown }).__service = 'x';
    expect(pageService()).toEqual({});
  });

  test("keeps the page's object, its siteKey and q, and replaces the stub methods", () => {
    const stub = () => {};
    const page = { siteKey: 'k', q: [['consent', [true]]], consent: stub };
    (window as unknown as { __service: unknown }).__service = page;
    const published = publishService(pageService(), api());
    expect(published).toBe(page);
    expect(published).toMatchObject({ siteKey: 'k', q: [['consent', [true]]] });
    expect(published.consent).not.toBe(stub);
  });
});
