/**
 * The links script (dist/loader-links.js): carries the click along the links and forms the visitor follows. Once
 * consented, to the site's other registrable domains in `_cnv` (data-linker); before consent, to same-site pages as
 * plain query parameters (data-url-passthrough). On a page whose tag lists domains, it also takes what a `_cnv` on the
 * landing URL carried and removes it from the address bar.
 */
import { originMatchesDomain } from '../protocol/origin';
import { LINKER_PARAM } from '../protocol/signals';
import { isAdTouch, queryOf } from './click-signals';
import { guard } from './guard';
import { pathElement } from './intent';
import { navigationUrl } from './landing';
import { addLinker, linkerDomains, linksTo, readLinker, removeLinkerFromAddress } from './linker';
import type { OptionalExports } from './optional';
import { passThrough } from './passthrough';

/** Lets decorate change a URL the visitor is about to follow; the link or form is updated when it did. */
const follow = (current: string, decorate: (url: URL) => void, apply: (href: string) => void): void => {
  const url = new URL(current);
  decorate(url);
  if (url.href !== current) apply(url.href);
};

/**
 * What decorate adds to a GET form's action goes in as hidden fields: the browser replaces the action's query with the
 * form's fields. A field of the form's own with that name wins (as a parameter already on a link does); one added by
 * an earlier submit of the same form (a single-page app that stays) is updated, so `_cnv` never goes out stale.
 */
const decorateGetForm = (form: HTMLFormElement, decorate: (url: URL) => void): void => {
  const url = new URL(form.action);
  url.search = '';
  decorate(url);
  url.searchParams.forEach((value, name) => {
    let field = form.elements.namedItem(name) as HTMLInputElement | null;
    if (!field) {
      field = form.appendChild(document.createElement('input'));
      field.type = 'hidden';
      field.name = name;
      field.dataset.cnv = '';
    }
    if (field.dataset && field.dataset.cnv === '') field.value = value;
  });
};

/**
 * Calls decorate with the URL of every link clicked and every form action submitted, before the browser follows it
 * (capture-phase listeners on document, so links and forms added later count; composedPath() finds links inside open
 * shadow roots). A GET form gets what is added as hidden fields (see decorateGetForm).
 */
export const watchFollows = (decorate: (url: URL) => void): void => {
  document.addEventListener(
    'submit',
    guard((event: Event) => {
      const form = event.target as HTMLFormElement;
      if (form.method === 'get') decorateGetForm(form, decorate);
      else follow(form.action, decorate, (href) => (form.action = href));
    }),
    true,
  );
  document.addEventListener(
    'click',
    guard((event: Event) => {
      const link = pathElement<HTMLAnchorElement>(event, 'a[href],area[href]');
      if (link) follow(link.href, decorate, (href) => (link.href = href));
    }),
    true,
  );
};

/** Starts decorating followed links for the core (see OptionalExports.links); returns what the landing's `_cnv` carried. */
export const startLinks: OptionalExports['links'] = (install, config, allowed, touch, landing, token) => {
  const domains = linkerDomains(install.linker);
  // The navigation entry keeps `_cnv` when a router has already cleaned the address bar.
  const linked = domains[0] && (queryOf(location.href).get(LINKER_PARAM) || queryOf(navigationUrl()).get(LINKER_PARAM));
  if (linked) removeLinkerFromAddress();
  watchFollows((url) => {
    const landed = landing();
    if (allowed()) {
      const carried = { touch: touch(), token: token() };
      if (linksTo(url, domains) && (carried.touch || carried.token)) addLinker(url, carried, Date.now());
    } else if (install.passthrough && landed && originMatchesDomain(config.domain, url.origin)) {
      passThrough(url, landed);
    }
  });
  const carried = linked ? readLinker(linked, Date.now()) : null;
  // A page with its own ad click keeps it: the newer click wins.
  return carried && !isAdTouch(landing()) ? carried : null;
};
