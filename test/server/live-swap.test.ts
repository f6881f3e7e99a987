// @vitest-environment happy-dom
/** Live sections swapped in by the dashboard's and the demo's scripts: the focus stays put, the summary line is said. */
import { beforeEach, describe, expect, it } from 'vitest';
import { LIVE_SWAP_SCRIPT } from '../../src/server/http/live-swap';
import { browserScript } from '../../src/demo/assets/browser-script';
import { SCRIPT } from '../../src/server/dashboard/layout';

interface LiveSwap {
  cnvSwapKeepingFocus(root: Element, markup: string): boolean;
  cnvAnnounceSummary(root: Element): void;
}

const live = new Function(`${LIVE_SWAP_SCRIPT}; return { cnvSwapKeepingFocus, cnvAnnounceSummary };`)() as LiveSwap;

const CHECKLIST = (done: number) => `<p data-live-summary>${done} of 3 steps done</p>
<ol><li><a href="/dashboard/sites">Add a site</a></li><li><a href="/dashboard/destinations">Connect</a></li><li>${done === 3 ? '' : '<a href="/dashboard/flows">Create a flow</a>'}</li></ol>`;

let section: HTMLElement;
beforeEach(() => {
  document.body.innerHTML = `<main><section id="setup">${CHECKLIST(0)}</section><a href="/elsewhere">Elsewhere</a></main>`;
  section = document.getElementById('setup')!;
});

const status = () => document.querySelector('[role="status"]');

describe('a live section swapped in', () => {
  it('keeps the focus on the same link when its content is replaced', () => {
    (section.querySelector('a[href="/dashboard/destinations"]') as HTMLElement).focus();
    expect(live.cnvSwapKeepingFocus(section, CHECKLIST(1))).toBe(true);
    expect(document.activeElement?.getAttribute('href')).toBe('/dashboard/destinations');
    expect(section.contains(document.activeElement)).toBe(true);
  });

  it('puts the focus at the same place among the controls when its control is gone, and never on the page body', () => {
    (section.querySelector('a[href="/dashboard/flows"]') as HTMLElement).focus();
    live.cnvSwapKeepingFocus(section, CHECKLIST(3));
    expect(document.activeElement?.getAttribute('href')).toBe('/dashboard/destinations');
    (section.querySelector('a[href="/dashboard/sites"]') as HTMLElement).focus();
    live.cnvSwapKeepingFocus(section, '<p data-live-summary>Done</p>');
    expect(document.activeElement).toBe(section);
  });

  it('leaves the focus alone when it is outside the section, and swaps nothing when nothing changed', () => {
    const elsewhere = document.querySelector('a[href="/elsewhere"]') as HTMLElement;
    elsewhere.focus();
    expect(live.cnvSwapKeepingFocus(section, CHECKLIST(1))).toBe(true);
    expect(document.activeElement).toBe(elsewhere);
    const before = section.firstElementChild;
    expect(live.cnvSwapKeepingFocus(section, CHECKLIST(1))).toBe(false);
    expect(section.firstElementChild).toBe(before);
  });

  it('says the summary line in a status region made empty beforehand, only when it changes', () => {
    live.cnvAnnounceSummary(section);
    expect(status()?.textContent).toBe('');
    expect(status()?.className).toBe('visually-hidden');
    live.cnvSwapKeepingFocus(section, CHECKLIST(1));
    live.cnvAnnounceSummary(section);
    expect(status()?.textContent).toBe('1 of 3 steps done');
    expect(document.querySelectorAll('[role="status"]')).toHaveLength(1);
    expect(section.querySelector('[role="status"]')).toBeNull();
  });

  it('is the one definition the dashboard and the demo scripts use', () => {
    expect(SCRIPT).toContain(LIVE_SWAP_SCRIPT);
    expect(browserScript()).toContain(LIVE_SWAP_SCRIPT);
    expect(SCRIPT).toContain('cnvSwapKeepingFocus(section, next.innerHTML)');
    expect(SCRIPT).not.toContain('section.innerHTML = next.innerHTML');
    expect(browserScript()).not.toContain('region.innerHTML = markup');
  });
});
