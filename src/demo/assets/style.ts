import { FIELD_ERROR_STYLE } from '../../server/http/field-error';

/** The demo site's one stylesheet: no external fonts or images, so the demo works offline. */
export const STYLESHEET = `
:root {
  --ink: #1c2430; --muted: #5d6b7e; --line: #e3e8ef; --field: #8a94a6; --paper: #ffffff; --wash: #f5f7fb;
  --brand: #4f46e5; --brand-ink: #ffffff; --ok: #166534; --ok-wash: #e8f6ed; --wait: #b45309; --wait-wash: #fdf3e3;
  --bad: #b91c1c; --bad-wash: #fdecec; --code: #0f172a;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--wash); line-height: 1.5;
}
* { box-sizing: border-box; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0; }
body { margin: 0; }
a { color: var(--brand); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88em; }
code { background: #eef1f7; border-radius: 4px; padding: .05em .35em; overflow-wrap: anywhere; }

.ribbon { background: var(--code); color: #cbd5e1; font-size: .85rem; padding: .5rem 1rem; }
.ribbon strong { color: #fff; }
.ribbon a { color: #a5b4fc; }
.ribbon code { background: rgba(255,255,255,.1); color: #e2e8f0; }
.ribbon .wrap { display: flex; gap: 1rem; flex-wrap: wrap; justify-content: space-between; }

.wrap { max-width: 980px; margin: 0 auto; padding: 0 1.25rem; }
header.site { background: var(--paper); border-bottom: 1px solid var(--line); }
header.site .wrap { display: flex; align-items: center; justify-content: space-between; height: 64px; }
.brand { white-space: nowrap; display: flex; align-items: center; gap: .6rem; font-weight: 700; font-size: 1.15rem; color: var(--ink); text-decoration: none; }
.brand-mark { width: 28px; height: 28px; border-radius: 8px; background: linear-gradient(135deg, #6366f1, #ec4899); }
nav a { margin-left: 1.25rem; color: var(--muted); text-decoration: none; font-weight: 500; }
nav a:hover { color: var(--ink); }
nav a[aria-current=page] { color: var(--ink); text-decoration: underline; text-decoration-thickness: 2px; text-underline-offset: 6px; }

main { padding: 2.5rem 0 4rem; }
h1 { font-size: 2.2rem; line-height: 1.2; margin: 0 0 .75rem; letter-spacing: -.02em; }
h2 { font-size: 1.3rem; margin: 2rem 0 .75rem; }
p.lead { font-size: 1.15rem; color: var(--muted); max-width: 42rem; }

.hero { display: grid; grid-template-columns: 1.4fr 1fr; gap: 2rem; align-items: start; }
@media (max-width: 820px) { .hero, .plans, .signup { grid-template-columns: 1fr !important; } }

.card { background: var(--paper); border: 1px solid var(--line); border-radius: 14px; padding: 1.25rem 1.4rem; box-shadow: 0 1px 2px rgba(16,24,40,.04); }
.card h2, .card h3 { margin: 0 0 .5rem; font-size: 1.05rem; }
.card.note { background: #eef2ff; border-color: #c7d2fe; }
.card.billing { margin: 0 0 1.25rem; display: grid; gap: .5rem; }
.card.billing .billing-head { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; }
.card.billing h2 { margin: 0; font-size: 1.1rem; }
.card.billing p { margin: 0; max-width: 62ch; }
.card.billing form { margin: .35rem 0 0; }
.muted { color: var(--muted); }
.small { font-size: .85rem; }

.button { display: inline-block; background: var(--brand); color: var(--brand-ink); border: 0; border-radius: 10px; padding: .7rem 1.15rem;
  font: inherit; font-weight: 600; text-decoration: none; cursor: pointer; }
.button:hover { filter: brightness(1.08); }
.button.ghost { background: transparent; color: var(--brand); border: 1px solid #c7d2fe; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; margin: 1.5rem 0; }

.plans { display: grid; grid-template-columns: repeat(3, 1fr); gap: 1rem; margin: 1.5rem 0 2rem; }
.plan .price { font-size: 1.8rem; font-weight: 700; }
.plan ul { padding-left: 1.1rem; color: var(--muted); margin: .5rem 0 0; }
.plan.featured { border: 2px solid var(--brand); }

.signup { display: grid; grid-template-columns: 1fr 1fr; gap: 1.5rem; align-items: start; }
form.stack label { display: block; font-weight: 600; font-size: .9rem; margin: .9rem 0 .3rem; }
form.stack input { width: 100%; padding: .65rem .75rem; border: 1px solid var(--field); border-radius: 9px; font: inherit; }
form.stack input:focus { outline: 2px solid var(--brand); outline-offset: 1px; border-color: var(--brand); }
form.stack .button { margin-top: 1.1rem; width: 100%; }
form.stack input[aria-invalid=true] { border-color: var(--bad); }
${FIELD_ERROR_STYLE}
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: .5rem 0 0; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }

.pill { display: inline-block; border-radius: 999px; padding: .05rem .6rem; font-size: .8rem; font-weight: 600; }
.pill.ok { color: var(--ok); background: var(--ok-wash); }
.pill.wait { color: var(--wait); background: var(--wait-wash); }
.pill.bad { color: var(--bad); background: var(--bad-wash); }
.pill.none { color: var(--muted); background: #eef1f7; }

ol.timeline { list-style: none; padding: 0; margin: 1rem 0; position: relative; }
ol.timeline::before { content: ""; position: absolute; left: 15px; top: 8px; bottom: 8px; width: 2px; background: var(--line); }
ol.timeline > li { position: relative; padding: 0 0 1.4rem 3rem; }
ol.timeline > li::before { content: ""; position: absolute; left: 6px; top: 2px; width: 20px; height: 20px; border-radius: 50%;
  background: var(--paper); border: 2px solid #cbd5e1; }
ol.timeline > li.done::before { background: var(--ok); border-color: var(--ok); box-shadow: inset 0 0 0 4px var(--paper); }
ol.timeline > li.waiting::before { border-color: var(--wait); animation: pulse 1.2s ease-in-out infinite; }
ol.timeline > li.failed::before { background: var(--bad); border-color: var(--bad); }
ol.timeline > li h3 { margin: 0; font-size: 1rem; }
ol.timeline > li .detail { margin-top: .35rem; }
@keyframes pulse { 50% { box-shadow: 0 0 0 6px var(--wait-wash); } }
@media (prefers-reduced-motion: reduce) { ol.timeline > li.waiting::before { animation: none; } }

dl.click-ids { margin: .25rem 0 .75rem; }
dl.click-ids dd code { background: rgba(255,255,255,.7); }
.deliveries { display: grid; gap: .9rem; margin-top: .9rem; }
.delivery { border: 1px solid var(--line); border-left: 4px solid #cbd5e1; border-radius: 12px; padding: .85rem 1rem; background: #fbfcfe; min-width: 0; }
.delivery.done { border-left-color: var(--ok); }
.delivery.waiting { border-left-color: var(--wait); }
.delivery.failed { border-left-color: var(--bad); }
.delivery header { display: flex; align-items: center; justify-content: space-between; gap: .75rem; }
.delivery h4 { margin: 0; font-size: 1rem; }
.delivery p { margin: .3rem 0 0; }
.request { margin-top: .6rem; min-width: 0; }
.request-line { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem .5rem; font-size: .85rem; }
.request-line .method { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-weight: 700; font-size: .8rem;
  color: #fff; background: var(--brand); border-radius: 5px; padding: .05rem .45rem; }
.request-line code.path { background: transparent; padding: 0; font-weight: 600; color: var(--ink); }
pre.request-body { background: var(--code); color: #e2e8f0; border-radius: 10px; padding: .8rem 1rem; overflow: auto; max-height: 36rem;
  font-size: .76rem; line-height: 1.45; margin: .5rem 0 .35rem; white-space: pre; }
@media (max-width: 600px) {
  .wrap { padding: 0 1rem; }
  main { padding-top: 1.75rem; }
  h1 { font-size: 1.8rem; }
  p.lead { font-size: 1.05rem; }
  .card { padding: 1rem; }
  nav a { margin-left: .9rem; }
  ol.timeline::before { left: 9px; }
  ol.timeline > li { padding-left: 1.9rem; }
  ol.timeline > li::before { left: 0; }
  ol.timeline dl.kv { grid-template-columns: 1fr; gap: 0; }
  ol.timeline dl.kv dd { margin-bottom: .4rem; }
  .deliveries { margin-left: -1.9rem; }
  .delivery { padding: .75rem; }
  pre.request-body { font-size: .7rem; padding: .7rem .75rem; max-height: 20rem; }
}

table.events { width: 100%; border-collapse: collapse; background: var(--paper); border: 1px solid var(--line); border-radius: 12px; overflow: hidden; }
table.events th, table.events td { text-align: left; padding: .6rem .65rem; border-bottom: 1px solid var(--line); font-size: .9rem; vertical-align: top; }
table.events th { background: #f8fafc; color: var(--muted); font-weight: 600; }
table.events tr:last-child td { border-bottom: 0; }
.table-scroll { overflow-x: auto; border-radius: 12px; }
.nowrap { white-space: nowrap; }
table.events .click { white-space: nowrap; }
table.events .event-cell { min-width: 9rem; }
table.events .value { font-weight: 600; margin-top: .15rem; }
table.events tr:has(+ tr.adjustment-row) td { border-bottom-style: dashed; }
table.events tr.adjustment-row td { background: #fbfcfe; padding-top: .45rem; }
table.events .adjustment-cell { width: 0; min-width: 100%; }
table.events .adjustment-results { list-style: none; margin: .35rem 0 0; padding: 0; display: grid; gap: .25rem; }
table.events .adjustment-results li { display: grid; grid-template-columns: 11rem 6.5rem minmax(0, 1fr); gap: .6rem; align-items: baseline; }
table.events .adjustment-results .dest-name { white-space: nowrap; }
table.events .adjustment-results .pill { justify-self: start; }
/* On a phone each event is a card: its cells stacked, each with its column's name. */
@media (max-width: 640px) {
  table.events thead { display: none; }
  table.events, table.events tbody, table.events tr, table.events td { display: block; width: 100%; }
  table.events tr { border-bottom: 1px solid var(--line); }
  table.events tr:last-child { border-bottom: 0; }
  table.events td { border-bottom: 0; padding: .35rem .75rem; }
  table.events td[data-label]::before { content: attr(data-label); display: block; font-size: .75rem; color: var(--muted); }
  table.events .event-cell { min-width: 0; }
  table.events tr.adjustment-row td:empty { display: none; }
}
@media (max-width: 820px) {
  table.events .adjustment-results li { grid-template-columns: minmax(0, 1fr) auto; }
  table.events .adjustment-results li > .muted { grid-column: 1 / -1; }
}
table.events .dest { display: flex; align-items: center; justify-content: space-between; gap: .6rem; white-space: nowrap; margin-bottom: .2rem; }

.browser-state { margin-top: 1rem; }
.browser-state dl.kv { grid-template-columns: 1fr; gap: .15rem; }
.browser-state dl.kv dt { font-size: .85rem; }
.browser-state dl.kv dd { margin-bottom: .6rem; }
.browser-state dd code { font-size: .8rem; }
footer { color: var(--muted); font-size: .85rem; padding: 2rem 0; border-top: 1px solid var(--line); }
`;
