/**
 * Issue 11 in real Chromium: each form tool's page (e2e/fixtures/forms) with the real loader against the real service,
 * from the ad click to the delivery. The pages pick the `forms` site (`?site=forms`), whose live form-trigger flows the
 * global setup published (one per integration → Google Ads through the fake Google; html on '/forms/*', plus an html
 * flow on '/pricing/*' the pages never match). A landing with a gclid and a successful submission send one
 * form-submissions request with the integration, the form id and the identity fields, and the service delivers one
 * `form_submission` event whose Google Ads upload carries the gclid; the same submission sent again creates nothing;
 * a failed validation sends nothing; a site without form triggers (`main`) never fetches the forms script.
 *
 * Each tool's test is the visitor who makes a mistake first: the submission its validation refuses sends nothing, the
 * corrected one is sent once. So a detector that took the refused attempt for a submission, or stopped listening after
 * it, fails; and each tool's page is opened once for both (a page and its loader cost about 2 s of the shared lane).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Request } from '@playwright/test';
import type { FormIntegration } from '../src/protocol/collector';
import type { FormSubmissionPayload } from '../src/protocol/forms';
import { optionalScriptPath } from '../src/protocol/install';
import type { CollectorTraffic } from './support/collector-traffic';
import { fixtureUrl, type E2EEnv } from './support/env';
import { awaitFormEventCompleted, listEvents } from './support/upload';
import { expect, loaderReady, test } from './support/test';
import { QUICK_POLL } from './support/poll';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'forms');
const FORMS_SCRIPT = optionalScriptPath('forms');

interface FormCase {
  integration: FormIntegration;
  /** The tool's success path: submit the form as it comes (its fields filled in). */
  submit(page: Page): Promise<void>;
  /** The tool's failure path: a submission its validation refuses. */
  fail(page: Page): Promise<void>;
  formId: string;
  /** Identity fields the submission carries besides the email (the iframe tools keep their answers: none). */
  fields: Record<string, string>;
  /** The email field the spec fills with an address unique to the test (the iframe tools: none, the events are found by flow). */
  emailField?: string;
  /** The iframe tools: their frame and its email field, which the spec fills in again after the failure emptied it. */
  frameEmail?: { frame: string; field: string };
  /** Frames of the tool's own origin the spec serves: URL glob → fixture file. */
  frames?: Record<string, string>;
}

const click = (selector: string) => (page: Page) => page.locator(selector).click();
const emptyThenClick = (field: string, button: string) => async (page: Page) => {
  await page.locator(field).fill('');
  await page.locator(button).click();
};
const inFrame = (frame: string, action: (page: ReturnType<Page['frameLocator']>) => Promise<void>) => (page: Page) => action(page.frameLocator(frame));

const CASES: FormCase[] = [
  {
    integration: 'html',
    submit: click('button[type=submit]'),
    fail: emptyThenClick('input[type=email]', 'button[type=submit]'),
    formId: 'callback',
    emailField: 'input[type=email]',
    fields: { phone: '+44 20 7946 0000', first_name: 'Ada', last_name: 'Lovelace' },
  },
  {
    integration: 'gravity-forms',
    submit: click('#gform_submit_button_3'),
    fail: emptyThenClick('#input_3_2', '#gform_submit_button_3'),
    formId: '3',
    emailField: '#input_3_2',
    fields: { phone: '+44 20 7946 0000', first_name: 'Ada', last_name: 'Lovelace' },
  },
  {
    integration: 'contact-form-7',
    submit: click('.wpcf7-submit'),
    fail: emptyThenClick('[name="your-email"]', '.wpcf7-submit'),
    formId: '42',
    emailField: '[name="your-email"]',
    fields: { first_name: 'Ada', last_name: 'Lovelace' },
  },
  {
    integration: 'wpforms',
    submit: click('#wpforms-submit-521'),
    fail: emptyThenClick('#wpforms-521-field_1', '#wpforms-submit-521'),
    formId: '521',
    emailField: '#wpforms-521-field_1',
    fields: { first_name: 'Ada', last_name: 'Lovelace' },
  },
  {
    integration: 'elementor',
    submit: click('.elementor-button'),
    fail: emptyThenClick('#form-field-email', '.elementor-button'),
    formId: '8a1b2c3',
    emailField: '#form-field-email',
    fields: { first_name: 'Ada', last_name: 'Lovelace' },
  },
  {
    integration: 'webflow',
    submit: click('.w-button'),
    fail: async (page) => {
      await page.locator('#email').fill('ada@example.invalid');
      await page.locator('.w-button').click();
    },
    formId: 'email-form',
    emailField: '#email',
    fields: { first_name: 'Ada', last_name: 'Lovelace' },
  },
  {
    integration: 'hubspot',
    submit: click('#hbspt-form-legacy .hs-button'),
    fail: emptyThenClick('#hbspt-form-legacy [name=email]', '#hbspt-form-legacy .hs-button'),
    formId: '3f5c696e-313e-4349-8e9f-a12679bb9ece',
    emailField: '#hbspt-form-legacy [name=email]',
    fields: { first_name: 'Ada', last_name: 'Lovelace' },
  },
  {
    integration: 'typeform',
    submit: inFrame('#typeform-frame', (frame) => frame.getByRole('button', { name: 'Submit' }).click()),
    fail: inFrame('#typeform-frame', async (frame) => {
      await frame.locator('input[type=email]').fill('');
      await frame.getByRole('button', { name: 'Submit' }).click();
    }),
    formId: 'PlBzgL',
    fields: {},
    frameEmail: { frame: '#typeform-frame', field: 'input[type=email]' },
    frames: { 'https://form.typeform.com/to/PlBzgL**': 'typeform-frame.html' },
  },
  {
    integration: 'calendly',
    submit: inFrame('#calendly-frame', async (frame) => {
      await frame.locator('#pick-time').click();
      await frame.getByRole('button', { name: 'Schedule Event' }).click();
    }),
    fail: inFrame('#calendly-frame', async (frame) => {
      await frame.locator('#pick-time').click();
      await frame.locator('input[type=email]').fill('');
      await frame.getByRole('button', { name: 'Schedule Event' }).click();
    }),
    formId: 'acme/demo',
    fields: {},
    frameEmail: { frame: '#calendly-frame', field: 'input[type=email]' },
    frames: { 'https://calendly.com/acme/demo**': 'calendly-frame.html' },
  },
];

/** Serves the tool's iframes at their real https origins, so their messages carry the origin the detector trusts. */
async function serveFrames(page: Page, frames: Record<string, string> = {}): Promise<void> {
  for (const [url, file] of Object.entries(frames)) {
    const body = readFileSync(join(FIXTURES, file), 'utf8');
    await page.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body }));
  }
}

/** The tool's page on the `forms` site, landed on from an ad click (gclid `F-<integration>`). */
const formPage = (integration: FormIntegration) => fixtureUrl('www', `/forms/${integration}.html?site=forms&gclid=F-${integration}`);

const isFormsScript = (request: Request) => new URL(request.url()).pathname === FORMS_SCRIPT;
const isSubmission = (request: Request) => /\/collect\/v1\/sites\/[^/]+\/form-submissions$/.test(new URL(request.url()).pathname);

/** The form-submissions requests sent so far (from index since), parsed. */
function submissions(traffic: CollectorTraffic, since = 0): { body: FormSubmissionPayload; request: Request }[] {
  return traffic.calls
    .slice(since)
    .filter((c) => isSubmission(c.request))
    .map((c) => ({ body: JSON.parse(c.request.postData() ?? 'null') as FormSubmissionPayload, request: c.request }));
}

/**
 * Opens the tool's page on the `forms` site (its real config lists the form triggers), and waits until the loader and
 * its forms script have run.
 */
async function openWatched(page: Page, traffic: CollectorTraffic, form: FormCase, env: E2EEnv): Promise<void> {
  await serveFrames(page, form.frames);
  const config = page.waitForResponse((response) => /\/collect\/v1\/sites\/[^/]+\/config$/.test(new URL(response.url()).pathname));
  await page.goto(formPage(form.integration));
  const forms = ((await (await config).json()) as { forms?: unknown }).forms;
  expect(forms, 'the real config lists the live form triggers of the forms site').toContainEqual({
    integration: form.integration,
    page_filter: env.formFlows.pageFilters[form.integration] ?? 'all',
  });
  await loaderReady(page, traffic);
  await expect.poll(() => traffic.calls.filter((c) => isFormsScript(c.request) && c.done).length, { message: 'the forms script loaded', ...QUICK_POLL }).toBe(1);
  await traffic.settle(page);
}

test('HubSpot repeating its success signal for one submission (legacy without conversionId, v4) sends one submission each', async ({ page, traffic, env }) => {
  const form = CASES.find((c) => c.integration === 'hubspot')!;
  await page.addInitScript(() => {
    (window as unknown as { hubspotRepeats: boolean }).hubspotRepeats = true;
  });
  await openWatched(page, traffic, form, env);
  await page.locator(form.emailField!).fill(`hubspot-repeat-${randomUUID().slice(0, 8)}@example.com`);
  const since = traffic.calls.length;
  await form.submit(page);
  await expect(page.locator('.submitted-message'), 'the legacy form was submitted (three success signals)').toBeVisible();
  await expect.poll(() => submissions(traffic, since).length, { message: 'a form-submissions request', ...QUICK_POLL }).toBe(1);
  await page.locator('#hs-v4-form button').click();
  await expect.poll(() => submissions(traffic, since).length, { message: 'the v4 form submission', ...QUICK_POLL }).toBe(2);
  await traffic.settle(page);
  const sent = submissions(traffic, since).map((s) => s.body.form_id);
  expect(sent, 'one submission per form, however often HubSpot repeated its signal').toEqual([form.formId, '6a1d2b3c-0000-4000-8000-000000000004']);
});

for (const form of CASES) {
  test.describe(form.integration, () => {
    test('a submission its validation refuses sends nothing; corrected after an ad click, it is sent once and delivered to Google Ads with the gclid', async ({
      page,
      traffic,
      env,
    }) => {
      // What the page hears of it: the id a browser pixel takes to deduplicate with cnv's conversion.
      await page.addInitScript(() => {
        const heard: unknown[] = ((window as unknown as { heard: unknown[] }).heard = []);
        window.addEventListener('service:form-submission', (e) => heard.push((e as CustomEvent).detail));
      });
      await openWatched(page, traffic, form, env);
      const refusedSince = traffic.calls.length;
      await form.fail(page);
      // Nothing sent can only be seen over a window of time: the tools answer within 50 ms, settle waits longer.
      await traffic.settle(page);
      expect(submissions(traffic, refusedSince), 'nothing sent for the submission the tool refused').toEqual([]);

      const email = form.emailField ? `${form.integration}-${randomUUID().slice(0, 8)}@example.com` : null;
      if (email) await page.locator(form.emailField!).fill(email);
      if (form.frameEmail) await page.frameLocator(form.frameEmail.frame).locator(form.frameEmail.field).fill('ada@example.com');
      const since = traffic.calls.length;
      await form.submit(page);
      await expect.poll(() => submissions(traffic, since).length, { message: 'a form-submissions request', ...QUICK_POLL }).toBe(1);
      await traffic.settle(page);
      const sent = submissions(traffic, since);
      expect(sent, 'exactly one form submission').toHaveLength(1);
      const { body, request } = sent[0]!;
      expect(new URL(request.url()).pathname).toBe(`/collect/v1/sites/${env.sites.forms.key}/form-submissions`);
      expect(request.headers()['content-type']).toBe('text/plain;charset=UTF-8');
      expect(body).toMatchObject({
        submission_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        integration: form.integration,
        form_id: form.formId,
        fields: email ? { ...form.fields, email } : form.fields,
        page_url: formPage(form.integration),
        touch: { click_ids: { gclid: `F-${form.integration}` } },
        consent: { ad_user_data: null, ad_personalization: null },
      });
      expect(JSON.stringify(body), 'a password is never read').not.toContain('never-read');
      expect(await page.evaluate(() => (window as unknown as { heard: unknown[] }).heard), 'the page heard the submission with the id cnv sends').toEqual([
        { submission_id: body.submission_id, integration: form.integration, form_id: form.formId },
      ]);
      const response = await request.response();
      if (response) expect(response.status(), 'the collector accepted it').toBe(204);
      expect(traffic.calls.filter((c) => isFormsScript(c.request)), 'the forms script is fetched once').toHaveLength(1);

      // The same submission again (a retried beacon): the service records a submission_id once.
      const again = await page.evaluate(
        async ([url, data]) => (await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: data })).status,
        [request.url(), request.postData() ?? ''] as const,
      );
      expect(again, 'the collector accepted the repeated submission').toBe(204);

      // The delivery: found by the email the form carried, or by the integration's flow (the iframe tools carry none).
      const flowId = env.formFlows.byIntegration[form.integration];
      const query = email ? { email } : { flow_id: flowId };
      const event = await awaitFormEventCompleted(env, query, body.submission_id);
      expect(event, 'the event of the submission').toMatchObject({
        trigger: 'form_submission',
        flow_id: flowId,
        integration: form.integration,
        form_id: form.formId,
        ...(email ? { email } : {}),
      });
      const google = event.actions.find((a) => a.destination === 'google-ads');
      expect(google?.status, 'the google-ads action').toBe('delivered');
      expect(google?.request, 'the click id uploaded to Google Ads').toMatchObject({ clickIdKind: 'gclid', clickId: `F-${form.integration}` });
      const events = (await listEvents(env, query)).filter((e) => e.submission_id === body.submission_id);
      expect(events.map((e) => e.id), 'one event for the submission sent twice (and no flow outside its page filter)').toEqual([event.id]);
      if (form.integration === 'html') {
        expect(await listEvents(env, { flow_id: env.formFlows.outsideFilter }), "the html flow on '/pricing/*' fired for /forms/html.html").toEqual([]);
      }
    });

  });
}

test('a site without form triggers never fetches the forms script, and a submission sends nothing', async ({ page, traffic }) => {
  // The html page on `main` (the default site), which has no form-trigger flow.
  await page.goto(fixtureUrl('www', '/forms/html.html'));
  await loaderReady(page, traffic);
  await page.locator('button[type=submit]').click();
  await traffic.settle(page);
  expect(traffic.calls.filter((c) => isFormsScript(c.request))).toEqual([]);
  expect(submissions(traffic)).toEqual([]);
  expect(traffic.of('config')).toHaveLength(1);
});

test('consent withdrawn stops the detectors, given again restarts them (one script fetch)', async ({ page, traffic, env }) => {
  const form = CASES[0]!;
  await openWatched(page, traffic, form, env);
  await page.evaluate(() => (window as unknown as { __service: { consent(granted: boolean): void } }).__service.consent(false));
  let since = traffic.calls.length;
  await form.submit(page);
  await traffic.settle(page);
  expect(submissions(traffic, since)).toEqual([]);
  await page.evaluate(() => (window as unknown as { __service: { consent(granted: boolean): void } }).__service.consent(true));
  since = traffic.calls.length;
  await form.submit(page);
  await expect.poll(() => submissions(traffic, since).length, QUICK_POLL).toBe(1);
  expect(traffic.calls.filter((c) => isFormsScript(c.request))).toHaveLength(1);
});

test('a Consent Mode dataLayer the page creates after the loader ran (a late banner) is honoured for form submissions', async ({
  page,
  traffic,
  env,
}) => {
  const form = CASES[0]!;
  await openWatched(page, traffic, form, env);
  // The banner's script arrives after the async loader: it creates the dataLayer with ad_storage denied by default.
  await page.evaluate(() => {
    const w = window as unknown as { dataLayer: unknown[] };
    w.dataLayer = [['consent', 'default', { ad_storage: 'denied', ad_user_data: 'denied' }]];
  });
  let since = traffic.calls.length;
  await form.submit(page);
  await traffic.settle(page);
  expect(submissions(traffic, since), 'nothing is sent while ad_storage is denied').toEqual([]);

  // The visitor grants it in the banner: the loader follows that dataLayer now, and the next submission is sent.
  await page.evaluate(() => {
    (window as unknown as { dataLayer: unknown[] }).dataLayer.push(['consent', 'update', { ad_storage: 'granted', ad_user_data: 'granted' }]);
  });
  since = traffic.calls.length;
  await form.submit(page);
  await expect.poll(() => submissions(traffic, since).length, QUICK_POLL).toBe(1);
  expect(submissions(traffic, since)[0]!.body.consent).toEqual({ ad_user_data: 'granted', ad_personalization: null });
});
