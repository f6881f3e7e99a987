/** Safe HTML for server-rendered pages (hosted handoff pages, the demo): a tagged template that escapes every value. */

/** A fragment of markup that is known safe (built by `html`, or a trusted constant through `raw`). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** Builds markup; interpolated strings are escaped, Html fragments and arrays of them are inserted as they are. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Trusted markup from a constant (never user input), inserted unescaped. */
export function raw(markup: string): Html {
  return new Html(markup);
}

/**
 * cnv's mark as the pages' icon, inline (a data: URL, so no request and no 404 for /favicon.ico): a "c" on the accent
 * blue of the pages.
 */
const FAVICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='7' fill='%232456d6'/%3E" +
  "%3Ctext x='16' y='22.5' text-anchor='middle' font-family='system-ui,sans-serif' font-size='20' font-weight='700' fill='%23fff'%3Ec%3C/text%3E%3C/svg%3E";

/**
 * A complete HTML document as every page of the service is one: English, UTF-8, mobile viewport, never indexed, its
 * own inline CSS (a trusted constant), then `head` extras and the body.
 */
export function htmlDocument(parts: { title: string; style: string; head?: Html; body: Html }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="${FAVICON}">
<title>${parts.title}</title>
<style>${raw(parts.style)}</style>
${parts.head ?? ''}</head>
<body>
${parts.body}
</body>
</html>
`.value;
}
