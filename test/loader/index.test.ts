// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { configFor, preparePage, resetPage, service } from './harness';

afterEach(resetPage);

describe('the loader entry (dist/loader.js)', () => {
  test('boots on load and defines nothing on window but __service', async () => {
    preparePage('https://www.example.com/?gclid=g', configFor('https://example.com'));
    const before = new Set(Object.getOwnPropertyNames(window));
    vi.resetModules();
    await import('../../src/loader/index');
    const added = Object.getOwnPropertyNames(window).filter((name) => !before.has(name));
    expect(added).toEqual(['__service']);
    expect(await service()!.ready).toBe(true);
  });

  test('an error while booting never reaches the page', async () => {
    preparePage('https://www.example.com/', configFor('https://example.com'));
    vi.spyOn(document, 'querySelectorAll').mockImplementation(() => {
      throw new Error('broken DOM');
    });
    Object.defineProperty(document, 'scripts', {
      configurable: true,
      get: () => {
        throw new Error('broken DOM');
      },
    });
    vi.resetModules();
    await expect(import('../../src/loader/index')).resolves.toBeDefined();
    delete (document as unknown as Record<string, unknown>).scripts;
  });
});
