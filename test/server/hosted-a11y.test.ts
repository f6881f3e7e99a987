/** The hosted pages as assistive technology reads them: titles that name the product, errors tied to their fields. */
import { describe, expect, it } from 'vitest';
import { notFoundPage, otherBrowserPage, unavailablePage } from '../../src/server/api/handoffs/hosted-pages';
import { page } from '../../src/server/http/page';
import { html } from '../../src/server/http/html';
import { colourOf, contrastRatio } from '../support/contrast';

const titleOf = (markup: string) => /<title>([^<]*)<\/title>/.exec(markup)![1];

describe('the hosted pages', () => {
  it('name the product in their title, as the dashboard does', () => {
    expect(titleOf(notFoundPage())).toBe('Link not found · cnv');
    expect(titleOf(otherBrowserPage())).toBe('Sign-in not started here · cnv');
    expect(titleOf(unavailablePage(503, 'Busy.'))).toBe('Try again in a minute · cnv');
    expect(titleOf(page('Your webhook secret', html``))).toBe('Your webhook secret · cnv');
  });

  it('leave a title that already names cnv as it is', () => {
    expect(titleOf(page('Connect Meta to cnv', html``))).toBe('Connect Meta to cnv');
  });
});

describe('the hosted page style', () => {
  it('draws the edge of text fields and selects at 3:1 or more against the white they sit on', () => {
    const css = /<style>([\s\S]*?)<\/style>/.exec(page('Link expired', html``))![1]!;
    for (const selector of ['input[type=text]', 'input[type=password]', 'select']) {
      expect(contrastRatio(colourOf(css, selector, 'border'), '#ffffff')).toBeGreaterThanOrEqual(3);
    }
  });
});
