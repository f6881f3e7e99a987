/** The dashboard's pages as assistive technology reads them: headers, titles, errors tied to their fields. */
import { describe, expect, it } from 'vitest';
import { keysPage } from '../../src/server/dashboard/pages/keys';
import type { DashboardSession } from '../../src/server/dashboard/sessions';
import { layout } from '../../src/server/dashboard/layout';
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
