/**
 * Completing a hosted handoff page the way a person does it in a browser: open the link, fill in the form, submit.
 * The demo does it over HTTP so that the first-run setup walks the same public path as a user.
 */

/** The handoff link, re-addressed to a base this process can reach (the public URL may name a proxy or a host alias). */
export function localHandoffUrl(handoffUrl: string, reachableBase: string): string {
  const url = new URL(handoffUrl);
  return `${reachableBase.replace(/\/+$/, '')}${url.pathname}`;
}

/** Opens the hosted page and submits its form with `fields`; returns the page shown after submitting. */
export async function submitHostedForm(url: string, fields: Record<string, string>): Promise<string> {
  const opened = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const page = await opened.text();
  if (!opened.ok) throw new Error(`The hosted page ${new URL(url).pathname} answered ${opened.status}.`);
  if (!/<form[^>]*method="post"/i.test(page)) throw new Error(`The hosted page ${new URL(url).pathname} shows no form to complete.`);
  const submitted = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(10_000),
  });
  const result = await submitted.text();
  if (!submitted.ok) {
    const message = /<p class="field-error">([^<]*)<\/p>/.exec(result)?.[1];
    throw new Error(`Submitting the hosted page ${new URL(url).pathname} answered ${submitted.status}${message ? `: ${message}` : ''}.`);
  }
  return result;
}

/** The webhook secret as the hosted page shows it once (what a user copies into their backend's configuration). */
export function webhookSecretOnPage(page: string): string | null {
  const match = /Webhook secret<\/dt>\s*<dd>\s*<pre>\s*([^<\s]+)\s*<\/pre>/i.exec(page);
  return match ? match[1]! : null;
}
