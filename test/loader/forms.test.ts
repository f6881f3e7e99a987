// @vitest-environment happy-dom
/**
 * The core's side of form submissions (issue 11): the forms script is fetched only when the config lists forms and the
 * page is active and consented; each successful submission is posted like a snapshot; consent withdrawn stops the
 * detectors and consent given again restarts them.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { boot } from '../../src/loader/boot';
import { SNAPSHOT_CONTENT_TYPE } from '../../src/protocol/collector';
import { CORRELATION_COOKIE } from '../../src/protocol/cookies';
import { addSignupForm, configFor, preparePage, resetPage, service, SERVICE, SITE_KEY, setGpc } from './harness';

afterEach(resetPage);

const formsScript = `${SERVICE}/loader-forms.js`;
const formSubmissionsUrl = `${SERVICE}/collect/v1/sites/${SITE_KEY}/form-submissions`;
const watching = (pageFilter = 'all') => configFor('https://example.com', { forms: [{ integration: 'html', page_filter: pageFilter }] });

/** A plain form marked data-service-form, added to the body; the page stays when it is submitted. */
function addServiceForm(): HTMLFormElement {
  const holder = document.createElement('div');
  holder.innerHTML = `
    <form data-service-form="callback" action="/api/callback" method="post">
      <input type="text" name="name" autocomplete="name" value="Ada Lovelace">
      <input type="email" name="email" value="ada@example.com">
      <input type="tel" name="phone" value="+44 20 7946 0000">
      <input type="password" name="password" value="never-read">
      <button type="submit">Call me</button>
    </form>`;
  document.body.appendChild(holder);
  const form = holder.querySelector('form')!;
  form.addEventListener('submit', (event) => event.preventDefault());
  return form;
}

describe('a config that lists forms', () => {
  test('fetches the forms script once, from the service, and a successful submission posts one form submission', async () => {
    const page = preparePage('https://www.example.com/contact?gclid=G1', watching());
    boot();
    await service()!.ready;
    expect(page.scripts).toEqual([formsScript]);
    addServiceForm().requestSubmit();
    await page.flush();
    expect(page.beacons).toHaveLength(1);
    const beacon = page.beacons[0]!;
    expect(beacon.url).toBe(formSubmissionsUrl);
    expect(beacon.type).toBe(SNAPSHOT_CONTENT_TYPE);
    expect(beacon.snapshot).toEqual({
      submission_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      integration: 'html',
      form_id: 'callback',
      consent: { ad_user_data: null, ad_personalization: null },
      fields: { email: 'ada@example.com', phone: '+44 20 7946 0000', first_name: 'Ada', last_name: 'Lovelace' },
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      page_url: 'https://www.example.com/contact?gclid=G1',
      referrer: null,
      touch: expect.objectContaining({ click_ids: { gclid: 'G1' } }),
      cookies: {},
    });
  });

  test('each submission gets a fresh submission_id, and no correlation cookie is written', async () => {
    const page = preparePage('https://www.example.com/contact', watching());
    boot();
    await service()!.ready;
    const form = addServiceForm();
    form.requestSubmit();
    // Another person's details (the same ones again at once would be a double submit: one lead).
    (form.elements.namedItem('email') as HTMLInputElement).value = 'grace@example.com';
    form.requestSubmit();
    await page.flush();
    const ids = page.beacons.map((b) => (b.snapshot as unknown as { submission_id: string }).submission_id);
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
    expect(page.jar.get(CORRELATION_COOKIE)).toBeUndefined();
  });

  test('carries the Consent Mode signals the dataLayer set', async () => {
    const page = preparePage('https://www.example.com/contact', watching());
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [
      ['consent', 'default', { ad_storage: 'granted', ad_user_data: 'denied', ad_personalization: 'denied' }],
      ['consent', 'update', { ad_user_data: 'granted' }],
    ];
    boot();
    await service()!.ready;
    addServiceForm().requestSubmit();
    await page.flush();
    expect(page.beacons[0]!.snapshot.consent).toEqual({ ad_user_data: 'granted', ad_personalization: 'denied' });
  });

  test('a page that no watch\'s page filter matches sends nothing (its fields never leave the page)', async () => {
    const page = preparePage('https://www.example.com/contact', watching('/pricing/*'));
    boot();
    await service()!.ready;
    addServiceForm().requestSubmit();
    await page.flush();
    expect(page.beacons).toEqual([]);
  });

  test('a form that fails the browser validation sends nothing', async () => {
    const page = preparePage('https://www.example.com/contact', watching());
    boot();
    await service()!.ready;
    const form = addServiceForm();
    const email = form.querySelector<HTMLInputElement>('input[type=email]')!;
    email.required = true;
    email.value = '';
    form.requestSubmit();
    await page.flush();
    expect(page.beacons).toEqual([]);
  });

  test('a marked signup form that is also a watched form sends its snapshot and its form submission', async () => {
    const page = preparePage('https://www.example.com/signup', watching());
    boot();
    await service()!.ready;
    const { form } = addSignupForm();
    form.setAttribute('data-service-form', 'signup');
    form.requestSubmit();
    await page.flush();
    expect(page.beacons.map((b) => b.url.split('/').pop())).toEqual(['snapshots', 'form-submissions']);
  });
});

describe('when the forms script is not fetched', () => {
  test('a config without forms (empty, or from a service that does not send them) fetches nothing', async () => {
    for (const config of [configFor('https://example.com'), { ...configFor('https://example.com'), forms: undefined }]) {
      const page = preparePage('https://www.example.com/contact', config);
      boot();
      await service()!.ready;
      addServiceForm().requestSubmit();
      await page.flush();
      expect(page.scripts).toEqual([]);
      expect(page.beacons).toEqual([]);
      resetPage();
    }
  });

  test('a page of another origin (inactive) fetches nothing', async () => {
    const page = preparePage('https://www.other.example/contact', watching());
    boot();
    expect(await service()!.ready).toBe(false);
    expect(page.scripts).toEqual([]);
  });

  test('not consented: nothing is fetched until consent(true), then submissions are sent', async () => {
    const page = preparePage('https://www.example.com/contact', watching(), { 'data-site-key': SITE_KEY, 'data-consent-required': '' });
    boot();
    await service()!.ready;
    const form = addServiceForm();
    form.requestSubmit();
    expect(page.scripts).toEqual([]);
    service()!.consent!(true);
    expect(page.scripts).toEqual([formsScript]);
    // The module arrives asynchronously, as in a browser; its detectors start once it has.
    await new Promise((resolve) => setTimeout(resolve));
    form.requestSubmit();
    await page.flush();
    expect(page.beacons.map((b) => b.url)).toEqual([formSubmissionsUrl]);
  });

  test('GPC refuses: nothing is fetched', async () => {
    const page = preparePage('https://www.example.com/contact', watching());
    setGpc(true);
    boot();
    await service()!.ready;
    expect(page.scripts).toEqual([]);
  });

  test('a forms script that fails to load leaves the rest of the loader working', async () => {
    const page = preparePage('https://www.example.com/signup', watching(), undefined, 'fail');
    boot();
    expect(await service()!.ready).toBe(true);
    expect(page.scripts).toEqual([formsScript]);
    addServiceForm().requestSubmit();
    expect(await service()!.captureSaasSignupIntent!()).toMatch(/^[A-Za-z0-9_-]{22}$/);
    await page.flush();
    expect(page.beacons.map((b) => b.url.split('/').pop())).toEqual(['snapshots']);
  });
});

describe('consent withdrawn and given again', () => {
  test('consent(false) stops the detectors; consent(true) starts them again without fetching the script twice', async () => {
    const page = preparePage('https://www.example.com/contact', watching());
    boot();
    await service()!.ready;
    const form = addServiceForm();
    const removed = vi.spyOn(document, 'removeEventListener');
    service()!.consent!(false);
    await Promise.resolve();
    expect(removed, 'the detectors\' listeners are removed').toHaveBeenCalledWith('submit', expect.any(Function), true);
    form.requestSubmit();
    await page.flush();
    expect(page.beacons).toEqual([]);
    service()!.consent!(true);
    await Promise.resolve();
    form.requestSubmit();
    await page.flush();
    expect(page.beacons.map((b) => b.url)).toEqual([formSubmissionsUrl]);
    expect(page.scripts).toEqual([formsScript]);
  });

  test('a Consent Mode denial of ad_storage stops them; a later grant starts them again', async () => {
    const page = preparePage('https://www.example.com/contact', watching());
    const layer: unknown[] = [];
    (window as unknown as { dataLayer: unknown[] }).dataLayer = layer;
    boot();
    await service()!.ready;
    const form = addServiceForm();
    const removed = vi.spyOn(document, 'removeEventListener');
    layer.push(['consent', 'update', { ad_storage: 'denied' }]);
    await Promise.resolve();
    expect(removed).toHaveBeenCalledWith('submit', expect.any(Function), true);
    form.requestSubmit();
    await page.flush();
    expect(page.beacons).toEqual([]);
    layer.push(['consent', 'update', { ad_storage: 'granted' }]);
    await Promise.resolve();
    form.requestSubmit();
    await page.flush();
    expect(page.beacons.map((b) => b.url)).toEqual([formSubmissionsUrl]);
  });
});
