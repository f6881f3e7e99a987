/** The hosted pages as assistive technology reads them: titles that name the product, errors tied to their fields. */
import { describe, expect, it } from 'vitest';
import { destinationFormPage, notFoundPage, otherBrowserPage, unavailablePage } from '../../src/server/api/handoffs/hosted-pages';
import { platformFor } from '../../src/server/destinations';
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

describe('a refused hosted form', () => {
  it('ties each refused field to the message under it: aria-invalid, aria-describedby naming its hint then the message', () => {
    const meta = platformFor('meta')!;
    const hosted = {
      kind: 'destination', handoff: {}, destination: meta, authorized: true, signedIn: false, signInOffered: false, replaces: null,
      accountName: 'Acme', apiElsewhere: null, fakeValues: null, provided: [], signInChoices: {},
    } as never;
    const page = destinationFormPage(hosted, { pixel_id: 'abc' }, [{ param: 'pixel_id', message: 'The dataset id is digits only.' }] as never);
    const control = /<input [^>]*id="pixel_id"[^>]*>/.exec(page)![0];
    expect(control).toContain('aria-invalid="true"');
    const hint = meta.fields.find((f) => f.name === 'pixel_id')!.hint;
    expect(control).toContain(`aria-describedby="${hint ? 'pixel_id-hint ' : ''}pixel_id-error"`);
    expect(page).toContain('<p class="field-error" id="pixel_id-error">The dataset id is digits only.</p>');
    expect(/<input [^>]*id="access_token"[^>]*>/.exec(page)![0]).not.toContain('aria-invalid');
  });
});
