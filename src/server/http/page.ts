/** The hosted pages' layout: one self-contained page shell with inline CSS. */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { Html, html, htmlDocument, raw } from './html';
import { COPY_BUTTONS_SCRIPT, COPYABLE_STYLE } from './copy-buttons';
import { FIELD_ERROR_STYLE } from './field-error';

export { Html, html, escapeHtml } from './html';
export { copyable } from './copy-buttons';

const STYLE = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #dfe3ea; --field: #8a94a6; --accent: #2456d6; --bad: #b42318; --good: #067647; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f5f7fa; }
main { max-width: 640px; margin: 48px auto; padding: 32px; background: #fff; border: 1px solid var(--line); border-radius: 12px; }
h1 { font-size: 1.4rem; margin: 0 0 8px; }
h2 { font-size: 1.1rem; margin: 24px 0 8px; }
p.lead { color: var(--muted); margin-top: 0; }
label { display: block; font-weight: 600; margin-top: 18px; }
.hint { display: block; font-weight: 400; color: var(--muted); font-size: .875rem; }
input[type=text], input[type=password], select { width: 100%; padding: 10px 12px; margin-top: 6px; font: inherit; border: 1px solid var(--field); border-radius: 8px; background: #fff; }
input[aria-invalid=true] { border-color: var(--bad); }
.fake-value { margin: 6px 0 0; padding: 6px 10px 2px; border-left: 3px solid #f79009; background: #fffaeb; border-radius: 0 8px 8px 0; }
.fake-value pre { margin: 4px 0 6px; background: #fff; }
a.button { display: inline-block; padding: 10px 18px; font-weight: 600; color: #fff; background: var(--accent); border: 1px solid var(--accent); border-radius: 8px; text-decoration: none; }
a.button.secondary { background: #fff; color: var(--accent); }
.brandline { display: flex; align-items: center; gap: 14px; margin: 0 0 12px; }
.brandline h1 { margin: 0; }
svg.logo { flex: none; }
p.back { margin: 28px 0 0; padding-top: 20px; border-top: 1px solid var(--line); }
button { margin-top: 24px; padding: 10px 18px; font: inherit; font-weight: 600; color: #fff; background: var(--accent); border: 0; border-radius: 8px; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
${COPYABLE_STYLE}${FIELD_ERROR_STYLE}.notice { padding: 12px 14px; border-radius: 8px; background: #eef4ff; margin: 16px 0; overflow-wrap: anywhere; }
.notice > p { margin: 0 0 6px; }
.notice > p:last-child { margin-bottom: 0; }
.notice.good { background: #ecfdf3; color: var(--good); }
.notice.warn { background: #fffaeb; }
.notice.bad { background: #fef3f2; color: var(--bad); }
code, pre { font: .875rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: #f1f3f7; padding: 12px 14px; border-radius: 8px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
dt { font-weight: 600; margin-top: 14px; }
dd { margin: 4px 0 0; }
ol { padding-left: 20px; }
@media (max-width: 640px) { main { margin: 0; padding: 20px 16px; border: 0; border-radius: 0; } }
footer { margin-top: 28px; color: var(--muted); font-size: .8125rem; }
`;

/** The script of the hosted pages' Copy buttons, allowed by its hash in HOSTED_PAGE_CSP: nothing else runs. */
const COPY_SCRIPT_HASH = `sha256-${createHash('sha256').update(COPY_BUTTONS_SCRIPT).digest('base64')}`;

/** The page title a tab or a screen reader shows: the page's own, naming the product as the dashboard's titles do. */
function titleOf(title: string): string {
  return /\bcnv\b/.test(title) ? title : `${title} · cnv`;
}

/**
 * A complete, self-contained page (inline CSS; no script but the Copy buttons', when `copyButtons` is set). Its title
 * gets " · cnv" unless it already names cnv ("Connect Meta to cnv").
 */
export function page(title: string, body: Html, { copyButtons = false }: { copyButtons?: boolean } = {}): string {
  return htmlDocument({
    title: titleOf(title),
    style: STYLE,
    body: html`<main>
${body}
<footer>cnv conversion tracking</footer>
</main>
${copyButtons ? html`<script>${raw(COPY_BUTTONS_SCRIPT)}</script>` : ''}`,
  });
}

/** Content-Security-Policy of the hosted pages: no script but the Copy buttons' (by its hash). */
export const HOSTED_PAGE_CSP = `default-src 'none'; script-src '${COPY_SCRIPT_HASH}'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

/**
 * Sends a server-rendered page: never cached, never leaked through a Referer, never framed, no MIME sniffing, and the
 * given Content-Security-Policy. `referrerPolicy` `same-origin` still sends no Referer to another site, and lets the
 * page's own form posts carry its real Origin (under `no-referrer` a browser sends `Origin: null`).
 */
export function sendHtml(
  reply: FastifyReply,
  status: number,
  body: string,
  csp: string = HOSTED_PAGE_CSP,
  referrerPolicy: 'no-referrer' | 'same-origin' = 'no-referrer',
): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', referrerPolicy)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', csp)
    .send(body);
}
