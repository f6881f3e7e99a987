/**
 * Completing a hosted handoff page the way a person does it in a browser: open the link, sign in with the platform
 * when the page asks (following the redirects to the platform's consent screen and back), fill in the form, submit.
 * The demo does it over HTTP so that the first-run setup walks the same public path as a user.
 */

const TIMEOUT_MS = 10_000;
/** More redirects than one sign-in takes (authorize → platform → callback → page) means something loops. */
const MAX_REDIRECTS = 6;

/** The handoff link, re-addressed to a base this process can reach (the public URL may name a proxy or a host alias). */
export function localHandoffUrl(handoffUrl: string, reachableBase: string): string {
  const url = new URL(handoffUrl);
  return `${reachableBase.replace(/\/+$/, '')}${url.pathname}${url.search}`;
}

/**
 * The hosted page's "Sign in with …" link (to `/handoffs/{token}/authorize`), or the form that starts the sign-in after
 * the choices it asks first (Google's API: its preselected values are taken, as a person who only clicks the button
 * sends them); null when the page shows neither.
 */
export function signInHref(page: string): string | null {
  const link = /<a [^>]*href="(\/handoffs\/[^"/]+\/authorize)"/i.exec(page);
  if (link) return link[1]!;
  const form = /<form method="get" action="(\/handoffs\/[^"/]+\/authorize)">([\s\S]*?)<\/form>/i.exec(page);
  if (!form) return null;
  const query = new URLSearchParams();
  for (const select of form[2]!.matchAll(/<select [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/gi)) {
    const chosen = /<option value="([^"]*)" selected>/i.exec(select[2]!) ?? /<option value="([^"]*)"/i.exec(select[2]!);
    if (chosen) query.set(select[1]!, chosen[1]!);
  }
  return query.size > 0 ? `${form[1]}?${query}` : form[1]!;
}

/**
 * The service's cookies, kept as a browser keeps them: the sign-in binds itself to the browser that started it with a
 * cookie `/authorize` sets and the OAuth callback asks for, so the demo carries it from one to the other. Only cookies
 * of the service's reachable origin, sent on the paths they name; a cookie set with Max-Age=0 is removed.
 */
export class ServiceCookies {
  private readonly cookies = new Map<string, { value: string; path: string }>();
  constructor(private readonly origin: string) {}

  /** Keeps the Set-Cookie headers of a response from `url`. */
  keep(url: string, res: Response): void {
    if (new URL(url).origin !== this.origin) return;
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const path = attributes.map((a) => /^\s*path=(.*)$/i.exec(a)?.[1]?.trim()).find((p) => p !== undefined) ?? '/';
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, { value: pair.slice(eq + 1).trim(), path });
    }
  }

  /** The Cookie header a browser sends to `url` (empty when none applies). */
  headerFor(url: string): string {
    const target = new URL(url);
    if (target.origin !== this.origin) return '';
    const applies = (path: string) => target.pathname === path || target.pathname.startsWith(path.endsWith('/') ? path : `${path}/`);
    return [...this.cookies].filter(([, c]) => applies(c.path)).map(([name, c]) => `${name}=${c.value}`).join('; ');
  }
}

/**
 * GETs `url` and follows its redirects one by one, as a browser does, except that a URL on the service's public
 * origin is re-addressed to `reachableBase`; keeps and sends the service's cookies; returns the final page.
 */
async function followRedirects(url: string, service: { publicOrigin: string; reachableBase: string; cookies: ServiceCookies }): Promise<{ url: string; page: string }> {
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const cookie = service.cookies.headerFor(current);
    const res = await fetch(current, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS), ...(cookie ? { headers: { cookie } } : {}) });
    service.cookies.keep(current, res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      const next = new URL(location, current);
      current = next.origin === service.publicOrigin ? localHandoffUrl(next.href, service.reachableBase) : next.href;
      continue;
    }
    const page = await res.text();
    if (!res.ok) {
      const problem = /<div class="notice warn">([^<]*)<\/div>/.exec(page)?.[1] ?? /<h1>([^<]*)<\/h1>/.exec(page)?.[1] ?? page.slice(0, 200);
      throw new Error(`${new URL(current).pathname} answered ${res.status}: ${problem}`);
    }
    return { url: current, page };
  }
  throw new Error(`More than ${MAX_REDIRECTS} redirects from ${new URL(url).pathname}.`);
}

/** Opens the hosted page and submits its form with `fields`; returns the page shown after submitting. */
export async function submitHostedForm(url: string, fields: Record<string, string>, opened?: string): Promise<string> {
  let page = opened;
  if (page === undefined) {
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    page = await res.text();
    if (!res.ok) throw new Error(`The hosted page ${new URL(url).pathname} answered ${res.status}.`);
  }
  if (!/<form[^>]*method="post"/i.test(page)) throw new Error(`The hosted page ${new URL(url).pathname} shows no form to complete.`);
  const submitted = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const result = await submitted.text();
  if (!submitted.ok) {
    const message = /<p class="field-error"[^>]*>([^<]*)<\/p>/.exec(result)?.[1];
    throw new Error(`Submitting the hosted page ${new URL(url).pathname} answered ${submitted.status}${message ? `: ${message}` : ''}.`);
  }
  return result;
}

/**
 * Completes a connect_destination handoff: opens its hosted page; when it asks to sign in with the platform, follows
 * the sign-in (service → the platform's authorize URL → the service's OAuth callback → the page again), carrying the
 * service's cookie from the first to the third as a browser does; then submits the account form with `fields`.
 * Returns the page shown after submitting.
 */
export async function completeDestinationHandoff(handoffUrl: string, reachableBase: string, fields: Record<string, string>): Promise<string> {
  const pageUrl = localHandoffUrl(handoffUrl, reachableBase);
  const service = { publicOrigin: new URL(handoffUrl).origin, reachableBase, cookies: new ServiceCookies(new URL(pageUrl).origin) };
  let { page } = await followRedirects(pageUrl, service);
  const signIn = signInHref(page);
  if (signIn) {
    const back = await followRedirects(new URL(signIn, pageUrl).href, service);
    if (new URL(back.url).pathname !== new URL(pageUrl).pathname) {
      throw new Error(`Signing in for ${new URL(pageUrl).pathname} ended on ${new URL(back.url).pathname}, not back on the hosted page.`);
    }
    page = back.page;
    if (signInHref(page)) throw new Error(`The hosted page ${new URL(pageUrl).pathname} still asks to sign in after the platform's consent.`);
  }
  return submitHostedForm(pageUrl, fields, page);
}

/** The webhook secret as the hosted page shows it once (what a user copies into their backend's configuration). */
export function webhookSecretOnPage(page: string): string | null {
  const match = /Webhook secret<\/dt>\s*<dd>\s*(?:<div[^>]*>\s*)?<pre\b[^>]*>\s*([^<\s]+)\s*<\/pre>/i.exec(page);
  return match ? match[1]! : null;
}
