/** The dashboard's pages as assistive technology reads them: headers, titles, errors tied to their fields. */
import { describe, expect, it } from 'vitest';
import { keysPage } from '../../src/server/dashboard/pages/keys';
import { sitesPage, type SiteView } from '../../src/server/dashboard/pages/sites';
import { privacyPage } from '../../src/server/dashboard/pages/privacy';
import { notificationsPage } from '../../src/server/dashboard/pages/notifications';
import { flowsPage, type FlowsPageData } from '../../src/server/dashboard/pages/flows';
import { checklistSection } from '../../src/server/dashboard/pages/overview';
import { installCheckSection } from '../../src/server/dashboard/pages/sites';
import { destinationsSection } from '../../src/server/dashboard/pages/destinations';
import { conversionsChart, STATUS_COLOURS, VALUE_COLOUR, valueChart } from '../../src/server/dashboard/chart';
import type { DashboardSession } from '../../src/server/dashboard/sessions';
import { layout, SCRIPT } from '../../src/server/dashboard/layout';
import { html } from '../../src/server/http/html';
import { colourOf, contrastRatio } from '../support/contrast';

const SESSION: DashboardSession = { accountId: 'acc_1', accountName: 'Acme', csrfToken: 'csrf', sessionToken: 'token' };

/** The header cells of the first table of a page, as their text (markup removed). */
function headerCells(page: string): string[] {
  const head = /<thead>([\s\S]*?)<\/thead>/.exec(page)![1]!;
  return [...head.matchAll(/<th\b[^>]*>([\s\S]*?)<\/th>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
}

describe('the API keys page', () => {
  it('names every column of the keys table, the Revoke column too (for screen readers only)', () => {
    const key = { id: 'key_1', prefix: 'cnv_sk_abcde', label: 'backend', created_at: new Date(0), last_used_at: null, revoked_at: null };
    const page = keysPage(SESSION, [key as never], 'http://cnv.test');
    expect(headerCells(page)).toEqual(['Starts with', 'Label', 'Created', 'Last used', 'Status', 'Revoke']);
    expect(page).toContain('<th><span class="visually-hidden">Revoke</span></th>');
  });
});

describe('the dashboard style', () => {
  const css = /<style>([\s\S]*?)<\/style>/.exec(layout({ title: 'Sites', nav: 'sites', session: SESSION }, html``))![1]!;

  it('draws the edge of text fields and selects at 3:1 or more against the white they sit on', () => {
    for (const selector of ['input[type=text]', 'input[type=url]', 'select']) {
      expect(contrastRatio(colourOf(css, selector, 'border'), '#ffffff')).toBeGreaterThanOrEqual(3);
    }
  });

  it('rings the focused control at 3:1 or more against the page and the cards', () => {
    const ring = colourOf(css, ':focus-visible', 'outline');
    expect(contrastRatio(ring, '#f5f7fa')).toBeGreaterThanOrEqual(3);
    expect(contrastRatio(ring, '#ffffff')).toBeGreaterThanOrEqual(3);
  });
});

/** The opening tag of the element with `id` in `page`. */
function tagOf(page: string, id: string): string {
  const tag = new RegExp(`<[a-z]+\\b[^>]*\\bid="${id}"[^>]*>`).exec(page);
  if (!tag) throw new Error(`no element #${id}`);
  return tag[0];
}

/** The ids an element's aria-describedby names. */
function describedBy(page: string, id: string): string[] {
  return /aria-describedby="([^"]*)"/.exec(tagOf(page, id))?.[1]!.split(' ') ?? [];
}

/** The text of the element with `id` (markup removed). */
function textOf(page: string, id: string): string {
  const match = new RegExp(`<([a-z]+)\\b[^>]*\\bid="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(page);
  if (!match) throw new Error(`no element #${id}`);
  return match[2]!.replace(/<[^>]+>/g, '').trim();
}

/** Expects the control `id` to be marked invalid and described by a message under it that says `message`. */
function expectTiedError(page: string, id: string, message: string | RegExp, notes: readonly string[] = []) {
  expect(tagOf(page, id)).toContain('aria-invalid="true"');
  expect(describedBy(page, id)).toEqual([...notes, `${id}-error`]);
  expect(tagOf(page, `${id}-error`)).toContain('class="field-error"');
  expect(textOf(page, `${id}-error`)).toMatch(message);
}

const SITE = { id: 'site_1', name: 'Shop', domain: 'https://www.example.com', timezone: 'UTC', site_key: 'key1', created_at: '2026-01-01T00:00:00.000Z' };
const CHECK = { origins: [], refusals: [] };

describe('a refused form on the dashboard', () => {
  it("ties a site's refused setting to its field: aria-invalid, and the message under it named by aria-describedby after the hint", () => {
    const view: SiteView = { site: SITE, check: CHECK, error: { message: 'Domain must not contain a path.', param: 'domain', values: { name: 'Shop', domain: 'https://x.example/p', timezone: 'UTC' } } };
    const page = sitesPage(SESSION, 'http://cnv.test', [view]);
    expectTiedError(page, 'site_1-domain', 'Domain must not contain a path.', ['site_1-domain-hint']);
    expect(tagOf(page, 'site_1-name')).not.toContain('aria-invalid');
    // Above the form: the message as a link to the field.
    expect(page).toContain('<a href="#site_1-domain">Domain must not contain a path.</a>');
  });

  it('ties a refused Add site field the same way', () => {
    const page = sitesPage(SESSION, 'http://cnv.test', [], [], { message: 'Give the site a name.', param: 'name', values: { name: ' ', domain: '' } });
    expectTiedError(page, 'new-site-name', 'Give the site a name.');
    expect(describedBy(page, 'new-site-domain')).toEqual(['new-site-domain-hint']);
  });

  it('ties a refused erasure field to its message (Personal data)', () => {
    const values = { email: '', phone: '555 0100', customer_id: '' };
    const page = privacyPage(SESSION, { erasures: [], retentionDays: 90, error: { message: 'phone must be a phone number with its country code, starting with + or 00 (E.164: at most 15 digits).', param: 'phone', values } });
    expectTiedError(page, 'erase-phone', 'Enter the phone number with its country code, starting with + or 00, e.g. +1 202 555 0143.');
    expect(page).not.toContain('phone must');
    expect(tagOf(page, 'erase-email')).not.toContain('aria-invalid');
  });

  it("ties a refused endpoint URL to its field and says it in words, not with the API's parameter name", () => {
    const page = notificationsPage(SESSION, {
      endpoints: [], recent: [],
      error: { message: 'url must be an absolute URL, e.g. https://example.com/webhooks/cnv.', param: 'url', url: 'hooks', kinds: ['event.failed'] },
    });
    expectTiedError(page, 'endpoint-url', 'Enter the whole address, starting with https://, e.g. https://example.com/webhooks/cnv.');
    expect(page).not.toContain('url must');
    // The kinds ticked stay as they were sent.
    expect(page).toMatch(/name="kind:event\.failed" value="1" checked/);
    expect(page).not.toMatch(/name="kind:destination\.recovered" value="1" checked/);
  });

  it('marks the kinds of an endpoint when none is ticked, the message in the group', () => {
    const page = notificationsPage(SESSION, {
      endpoints: [], recent: [], error: { message: 'Choose at least one kind of notification.', param: 'kinds', url: 'https://example.com/h', kinds: [] },
    });
    expect(describedBy(page, 'endpoint-kinds')).toEqual(['endpoint-kinds-error']);
    expect(textOf(page, 'endpoint-kinds-error')).toBe('Choose at least one kind of notification.');
    expect(page).not.toMatch(/name="kind:[^"]+" value="1" checked/);
    expect(tagOf(page, 'endpoint-url')).not.toContain('aria-invalid');
  });

  const flowsData = (error: FlowsPageData['error']): FlowsPageData => ({
    flows: [], sites: [SITE], triggerSources: new Map(), publishProblems: new Map(), formIntegrations: ['hubspot'],
    destinations: [{ id: 'dst_1', type: 'meta', label: 'Meta', status: 'connected', account: {}, connected_at: '', created_at: '' }],
    webhookUrlOf: () => 'http://cnv.test/w', webhookBaseUrl: 'http://cnv.test', error,
  });

  it('ties a refused flow field to its message after its hint (Create a flow)', () => {
    const page = flowsPage(SESSION, flowsData({ message: 'Trigger key: must match…', param: 'trigger_config.key', values: { key: 'not a key!' } }));
    expectTiedError(page, 'flow-key', 'Trigger key: must match…', ['flow-key-hint']);
    expect(page).not.toContain('aria-errormessage');
  });

  it('marks the "Send to" group when no destination is ticked, with the message in it', () => {
    const page = flowsPage(SESSION, flowsData({ message: 'Tick at least one destination for the flow to send to.', param: 'actions_config', values: { name: 'Leads' } }));
    expect(describedBy(page, 'flow-actions')).toEqual(['flow-actions-error']);
    expect(textOf(page, 'flow-actions-error')).toBe('Tick at least one destination for the flow to send to.');
    expect(page).toMatch(/name="action_meta" value="on" aria-invalid="true"/);
    expect(page).toContain('<a href="#flow-actions">Tick at least one destination');
  });
});

describe('after a failed submit', () => {
  const view: SiteView = { site: SITE, check: CHECK, error: { message: 'Domain must not contain a path.', param: 'domain', values: { name: 'Shop', domain: 'x', timezone: 'UTC' } } };

  it("posts each form to an address whose fragment is its message's id, so the refusal opens at the message", () => {
    const sites = sitesPage(SESSION, 'http://cnv.test', [view]);
    expect(sites).toContain('<form method="post" action="/dashboard/sites/site_1#site_1-error"');
    expect(tagOf(sites, 'site_1-error')).toContain('tabindex="-1"');
    expect(sites).toContain('<form method="post" action="/dashboard/sites#new-site-error">');
    const flows = flowsPage(SESSION, {
      flows: [], sites: [SITE], triggerSources: new Map(), publishProblems: new Map(), formIntegrations: [], destinations: [],
      webhookUrlOf: () => '', webhookBaseUrl: 'http://cnv.test',
    });
    expect(flows).toContain('<form method="post" action="/dashboard/flows#new-flow-error">');
  });

  it('renders the message above the form focusable by script (tabindex -1), and the script focuses it', () => {
    const page = sitesPage(SESSION, 'http://cnv.test', [view]);
    expect(tagOf(page, 'site_1-error')).toMatch(/role="alert"[^>]*data-error-summary[^>]*tabindex="-1"/);
    expect(SCRIPT).toContain("document.querySelector('[data-error-summary]')");
    expect(SCRIPT).toMatch(/refusal\.focus\(\)/);
  });
});

describe('a live section', () => {
  const summaries = (markup: string) => [...markup.matchAll(/<[a-z]+\b[^>]*data-live-summary[^>]*>([\s\S]*?)<\/[a-z]+>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());

  it('marks one short line as its summary (said when it changes), and is no live region as a whole', () => {
    const steps = [{ id: 'domain', title: 'Domain', detail: 'd', done: true, href: '/dashboard/sites', action: 'Set' }, { id: 'install', title: 'Install', detail: 'd', done: false, href: '/dashboard/sites', action: 'Install' }] as never;
    expect(summaries(String(checklistSection(steps)))).toEqual(['1 of 2 steps done. Each step ticks itself as soon as cnv sees it done.']);
    const check = String(installCheckSection({ site: SITE, check: CHECK }));
    expect(summaries(check)).toEqual([expect.stringMatching(/^Waiting for the first page view/)]);
    const destination = { id: 'dst_1', type: 'meta', label: 'Meta', status: 'reauthorization_required', account: {}, connected_at: '', created_at: '' };
    expect(summaries(String(destinationsSection(SESSION, [destination], [])))).toEqual(['Ad platforms: Meta reauthorization required.']);
    expect(summaries(String(destinationsSection(SESSION, [], [])))).toEqual(['No ad platform connected yet: pick one below.']);
    for (const markup of [check, String(destinationsSection(SESSION, [destination], []))]) {
      expect(markup).not.toContain('role="status"');
      expect(markup).not.toContain('aria-live');
    }
  });
});

describe('the events chart', () => {
  /** The rows of the first table in `markup`, each as its cells' text. */
  const rowsOf = (markup: string) =>
    [...markup.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<t[hd]\b[^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => c[1]!.trim()));

  it('has its numbers per day as a table behind a "Show as table" disclosure, one column per status', () => {
    const days = ['2026-03-01', '2026-03-02'];
    const chart = String(conversionsChart([
      { day: '2026-03-01', status: 'delivered', count: 3 }, { day: '2026-03-01', status: 'failed', count: 1 }, { day: '2026-03-02', status: 'queued', count: 2 },
    ], days));
    expect(chart).toMatch(/<details class="chart-table"><summary>Show as table<\/summary>/);
    expect(rowsOf(chart)).toEqual([
      ['Day', 'delivered', 'queued', 'failed', 'Total'],
      ['2026-03-01', '3', '0', '1', '4'],
      ['2026-03-02', '0', '2', '0', '2'],
    ]);
    expect(chart).toContain('<th scope="row">2026-03-01</th>');
  });

  it('has a table per currency of the value view', () => {
    const chart = String(valueChart([{ day: '2026-03-02', currency: 'EUR', value: 29, conversions: 1 }], ['2026-03-01', '2026-03-02']));
    expect(rowsOf(chart)).toEqual([['Day', 'Value (EUR)', 'Conversions'], ['2026-03-01', 'EUR 0.00', '0'], ['2026-03-02', 'EUR 29.00', '1']]);
  });

  it('draws every status and the value at 3:1 or more against the white card, stacked parts parted by a white line', () => {
    for (const [status, colour] of [...STATUS_COLOURS, ['value', VALUE_COLOUR] as const]) {
      expect(contrastRatio(colour, '#ffffff'), status).toBeGreaterThanOrEqual(3);
    }
    expect(String(conversionsChart([{ day: '2026-03-01', status: 'delivered', count: 3 }], ['2026-03-01']))).toMatch(/<rect [^>]*stroke="#fff"/);
  });
});
