// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { linkerDomains } from '../../src/loader/linker';
import { findInstall } from '../../src/loader/script-tag';
import { addScript, resetPage } from './harness';

afterEach(resetPage);

/** A document whose currentScript is `current` (happy-dom sets none while a test runs). */
const docWith = (current: HTMLScriptElement | null) => ({ currentScript: current, scripts: document.scripts }) as unknown as Document;

describe('site key discovery', () => {
  test('takes data-site-key of the running script, and the origin of its src as the service', () => {
    const tag = addScript('https://cnv.test/loader.js', { 'data-site-key': 'k1' });
    expect(findInstall(docWith(tag), undefined)).toEqual({
      siteKey: 'k1',
      api: 'https://cnv.test/loader.js',
      consentRequired: false,
      passthrough: false,
      linker: null,
    });
  });

  test('takes the site_key query parameter of the running script when it has no data-site-key (tag managers)', () => {
    const tag = addScript('https://cnv.test/loader.js?site_key=k2');
    expect(findInstall(docWith(tag), undefined)!.siteKey).toBe('k2');
  });

  test('prefers data-site-key over the query parameter', () => {
    const tag = addScript('https://cnv.test/loader.js?site_key=from-src', { 'data-site-key': 'from-attr' });
    expect(findInstall(docWith(tag), undefined)!.siteKey).toBe('from-attr');
  });

  test('without a current script, uses the first script whose src path ends in /loader.js and carries a key', () => {
    addScript('https://cdn.test/app.js?site_key=not-a-loader');
    addScript('https://cnv.test/loader.js');
    addScript('https://cnv.test/v2/loader.js?site_key=k3#x');
    addScript('https://cnv.test/loader.js', { 'data-site-key': 'k4' });
    expect(findInstall(docWith(null), undefined)).toMatchObject({ siteKey: 'k3', api: 'https://cnv.test/v2/loader.js?site_key=k3#x' });
  });

  test('a src that only contains /loader.js elsewhere is not the loader', () => {
    addScript('https://cnv.test/loader.js.map?site_key=k5');
    addScript('https://cnv.test/loader.jsx', { 'data-site-key': 'k6' });
    expect(findInstall(docWith(null), undefined)).toBeNull();
  });

  test('falls back to window.__service.siteKey, with the base URL from the running loader', () => {
    const tag = addScript('https://cnv.test/loader.js');
    expect(findInstall(docWith(tag), 'from-page')).toMatchObject({
      siteKey: 'from-page',
      api: 'https://cnv.test/loader.js',
      consentRequired: false,
    });
  });

  test('a key on the tag wins over window.__service.siteKey', () => {
    const tag = addScript('https://cnv.test/loader.js', { 'data-site-key': 'tag' });
    expect(findInstall(docWith(tag), 'page')!.siteKey).toBe('tag');
  });

  test('without any key there is no install', () => {
    const tag = addScript('https://cnv.test/loader.js', { 'data-site-key': '' });
    expect(findInstall(docWith(tag), undefined)).toBeNull();
    expect(findInstall(docWith(tag), 42)).toBeNull();
  });

  test('data-api overrides the service base URL; data-consent-required is read from the same tag', () => {
    const tag = addScript('https://cnv.test/loader.js', {
      'data-site-key': 'k',
      'data-api': 'https://collect.example.org',
      'data-consent-required': '',
    });
    expect(findInstall(docWith(tag), undefined)).toMatchObject({ siteKey: 'k', api: 'https://collect.example.org', consentRequired: true });
  });

  test('an inline current script does not stop the lookup of the loader tag', () => {
    const inline = document.createElement('script');
    document.head.appendChild(inline);
    addScript('https://cnv.test/loader.js?site_key=k7');
    expect(findInstall(docWith(inline), undefined)!.siteKey).toBe('k7');
  });

  test('the running script with a key is used without scanning the document scripts', () => {
    const tag = addScript('https://cnv.test/loader.js', { 'data-site-key': 'k8' });
    const doc = {
      currentScript: tag,
      get scripts(): never {
        throw new Error('scanned');
      },
    } as unknown as Document;
    expect(findInstall(doc, undefined)!.siteKey).toBe('k8');
  });

  test('data-url-passthrough and data-linker are read from the same tag (the links script parses the domains)', () => {
    const tag = addScript('https://cnv.test/loader.js', {
      'data-site-key': 'k',
      'data-url-passthrough': '',
      'data-linker': 'Example-App.io, other.example  third.example',
    });
    const install = findInstall(docWith(tag), undefined)!;
    expect(install).toMatchObject({ passthrough: true, linker: 'Example-App.io, other.example  third.example' });
    expect(linkerDomains(install.linker)).toEqual(['example-app.io', 'other.example', 'third.example']);
    expect(linkerDomains(null)).toEqual([]);
    expect(linkerDomains(' , ')).toEqual([]);
  });
});
