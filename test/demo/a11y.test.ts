/** The demo pages as assistive technology reads them: titles, headings, the current page, landmarks, form errors. */
import { describe, expect, it } from 'vitest';
import { STYLESHEET } from '../../src/demo/assets/style';
import { colourOf, contrastRatio, declarationsOf } from '../support/contrast';
import { landingPage } from '../../src/demo/pages/landing';
import { pricingPage } from '../../src/demo/pages/pricing';
import { welcomePage } from '../../src/demo/pages/welcome';
import { journeyFragment } from '../../src/demo/pages/journey-view';

describe('the demo style', () => {
  it('draws the edge of the signup fields, and their focus ring, at 3:1 or more against the white they sit on', () => {
    expect(contrastRatio(colourOf(STYLESHEET, 'form.stack input', 'border'), '#ffffff')).toBeGreaterThanOrEqual(3);
    expect(contrastRatio(colourOf(STYLESHEET, 'form.stack input:focus', 'outline'), '#ffffff')).toBeGreaterThanOrEqual(3);
  });
});

const CTX = { serviceUrl: 'http://127.0.0.1:8787', siteKey: 'abc123' };
const CLICK_IDS = { gclid: 'g', fbclid: 'f', msclkid: 'm', li_fat_id: 'l', rdt_cid: 'r', ttclid: 't' };
const SIGNUP = { id: 'u1', name: 'Ada Lovelace', email: 'ada@example.com', upgrade: null, refund: null } as never;
const JOURNEY = { final: false, steps: [{ key: 'click', title: 'Ad click', state: 'done', summary: 'Stored.', facts: [] }] } as never;
const PLAN = { key: 'demo-paid', value: 29, currency: 'EUR' };

const pages = () => ({
  landing: landingPage(CTX, { clickIds: [['gclid', 'g']], freshClickIds: CLICK_IDS }).value,
  landingWithoutClick: landingPage(CTX, { clickIds: [], freshClickIds: CLICK_IDS }).value,
  pricing: pricingPage(CTX).value,
  welcome: welcomePage(CTX, SIGNUP, JOURNEY, { plan: PLAN }).value,
});

const titleOf = (page: string) => /<title>([^<]*)<\/title>/.exec(page)![1];

describe('the demo pages', () => {
  it('have a title of their own: the landing page and the welcome page are told apart', () => {
    const { landing, pricing, welcome } = pages();
    expect(new Set([titleOf(landing), titleOf(pricing), titleOf(welcome)]).size).toBe(3);
    expect(titleOf(landing)).toBe('Ship parcels without the paperwork · Demo store');
    expect(titleOf(welcome)).toBe('Welcome aboard · Demo store');
  });

  it('never skip a heading level (h1, then h2, then h3…)', () => {
    for (const [name, page] of Object.entries(pages())) {
      const levels = [...page.matchAll(/<h([1-6])\b/g)].map((m) => Number(m[1]));
      expect(levels[0], name).toBe(1);
      levels.forEach((level, i) => {
        if (i > 0) expect(level - levels[i - 1]!, `${name}: h${levels[i - 1]} then h${level}`).toBeLessThanOrEqual(1);
      });
    }
  });

  it('mark the current page in the navigation for screen readers, not only by colour', () => {
    const { pricing, welcome } = pages();
    expect(pricing).toContain('<a href="/pricing" aria-current="page">Pricing</a>');
    expect(pricing.match(/aria-current/g)).toHaveLength(1);
    expect(welcome).not.toContain('aria-current');
    expect(colourOf(STYLESHEET, 'nav a[aria-current=page]', 'color')).toBeTruthy();
    expect(declarationsOf(STYLESHEET, 'nav a[aria-current=page]')).toContain('text-decoration: underline');
  });

  it('put the demo ribbon in a landmark of its own', () => {
    expect(pages().pricing).toMatch(/<aside class="ribbon" aria-label="About this demo">[\s\S]*?Events seen by cnv[\s\S]*?<\/aside>/);
  });
});

describe('a refused signup on the pricing page', () => {
  it('ties the message to its field: aria-invalid, aria-describedby to the message under it, and the focus there', () => {
    const page = pricingPage(CTX, { errors: { email: 'Please enter a valid email address.' }, email: 'nope', name: 'Ada' }).value;
    const email = /<input id="email"[^>]*>/.exec(page)![0];
    expect(email).toContain('aria-invalid="true"');
    expect(email).toContain('aria-describedby="email-error"');
    expect(email).toContain('autofocus');
    expect(page).toContain('<p class="field-error" id="email-error">Please enter a valid email address.</p>');
    expect(/<input id="name"[^>]*>/.exec(page)![0]).not.toContain('aria-invalid');
  });

  it('marks every wrong field with its own message, the focus on the first', () => {
    const page = pricingPage(CTX, { errors: { email: 'Please enter a valid email address.', name: 'Please enter your name.' }, email: 'nope', name: '' }).value;
    const email = /<input id="email"[^>]*>/.exec(page)![0];
    const name = /<input id="name"[^>]*>/.exec(page)![0];
    expect(email).toContain('aria-invalid="true"');
    expect(name).toContain('aria-invalid="true"');
    expect(email).toContain('autofocus');
    expect(name).not.toContain('autofocus');
    expect(page).toContain('<p class="field-error" id="name-error">Please enter your name.</p>');
  });

  it('says an error of no field above the form, as an alert', () => {
    expect(pricingPage(CTX, { error: 'Try again.' }).value).toContain('<p class="pill bad" role="alert">Try again.</p>');
  });
});

describe('the live journey of the welcome page', () => {
  it('marks one short line as its summary, said when it changes: the steps done and the step it is at', () => {
    const journey = { final: false, steps: [
      { key: 'click', title: 'Ad click', state: 'done', summary: '', facts: [] },
      { key: 'report', title: 'Backend report', state: 'waiting', summary: '', facts: [] },
      { key: 'stage', title: 'Paid plan', state: 'skipped', summary: '', facts: [] },
    ] } as never;
    expect(journeyFragment(journey).value).toContain('<p class="visually-hidden" data-live-summary>1 of 2 steps done; Backend report: waiting.</p>');
    expect(STYLESHEET).toContain('.visually-hidden {');
  });
});

describe('the welcome page', () => {
  it('claims no ad click the visit may not have had: a signup without one (docs/demo.md invites it) reads true too', () => {
    const noClick = { final: false, steps: [{ key: 'click', title: 'Ad click captured', state: 'skipped', summary: 'No ad click.', facts: [] }] } as never;
    // The page is rendered before cnv has paired the signup, so the lead cannot know yet whether there was a click.
    const lead = /<p class="lead">([\s\S]*?)<\/p>/.exec(welcomePage(CTX, SIGNUP, noClick, { plan: PLAN }).value)![1]!;
    expect(lead).not.toMatch(/the ad click you arrived with/);
    expect(lead).toMatch(/from the visit that brought you here \(an ad click, when it came from one\)/);
  });
});
