/**
 * The events chart, as inline SVG: conversions per day stacked by the delivery status of each destination, or (the
 * value view) the reported value per day, one chart per currency (different currencies are never added together).
 */
import { html, type Html } from './layout';
import type { DailyActionCount, DailyValue } from './sql';
import { moneyOf } from '../../protocol/money';

/**
 * Status colours, in stacking order (bottom first), each at 3:1 or more against the white card (WCAG 1.4.11); stacked
 * parts are also parted by a white line, and every chart has its numbers as a table.
 */
export const STATUS_COLOURS: ReadonlyArray<readonly [string, string]> = [
  ['delivered', '#039855'],
  ['queued', '#dc6803'],
  ['failed', '#d92d20'],
  // Not sent because its person was erased: stored as failed, but nothing to fix. In the legend only when present.
  ['erased', '#667085'],
];

/** The colour of value bars. */
export const VALUE_COLOUR = '#1570ef';

/** The numbers of a chart as a table, behind a "Show as table" disclosure (the same numbers the bars draw). */
function chartTable(caption: string, headers: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): Html {
  return html`<details class="chart-table"><summary>Show as table</summary>
<div class="table-wrap"><table><caption class="visually-hidden">${caption}</caption>
<thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr><th scope="row">${row[0]}</th>${row.slice(1).map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
</table></div></details>`;
}

/** What the chart shows: conversions per day (by status), or the reported value per day (per currency). */
export type ChartView = 'conversions' | 'value';

/** The days from `from` to `to` (UTC, inclusive) as YYYY-MM-DD. */
export function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  const day = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  while (day.getTime() <= to.getTime()) {
    days.push(day.toISOString().slice(0, 10));
    day.setUTCDate(day.getUTCDate() + 1);
  }
  return days;
}

/** One coloured part of a day's bar, with the words its <title> says. */
interface Segment {
  colour: string;
  value: number;
  title: string;
}

/** A bar chart of `days` whose bars stack `segments`; the y axis in `axis` words. */
function bars(days: readonly string[], segmentsOf: (day: string) => Segment[], options: { height: number; label: string; axis: (value: number) => string }): Html {
  const width = 720;
  const height = options.height;
  const pad = { left: 44, right: 8, top: 10, bottom: 26 };
  const stacks = days.map((d) => segmentsOf(d).filter((s) => s.value > 0));
  const totals = stacks.map((s) => s.reduce((a, b) => a + b.value, 0));
  const top = niceCeiling(Math.max(0, ...totals));
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(4, slot * 0.62);
  const y = (value: number) => pad.top + plotH - (value / top) * plotH;
  const ticks = [0, top / 2, top];
  const axisLabels = ticks.map((v) => html`<text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11" fill="#5b6475">${options.axis(v)}</text>`);
  const grid = ticks.map((v, i) => html`<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#e4e7ec"/>${axisLabels[i]}`);
  const drawn = days.map((day, i) => {
    const x = pad.left + i * slot + (slot - barW) / 2;
    let base = 0;
    const rects = stacks[i]!.map((s) => {
      const rect = html`<rect x="${x.toFixed(1)}" y="${y(base + s.value).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - y(base + s.value)).toFixed(1)}" fill="${s.colour}" stroke="#fff" stroke-width="1"><title>${s.title}</title></rect>`;
      base += s.value;
      return rect;
    });
    const label = (days.length - 1 - i) % Math.ceil(days.length / 7) === 0
      ? html`<text x="${(x + barW / 2).toFixed(1)}" y="${height - 8}" text-anchor="middle" font-size="11" fill="#5b6475">${day.slice(5)}</text>`
      : '';
    return html`${rects}${label}`;
  });
  // On a phone the plot scrolls sideways and opens on today (its right end), which would leave the y axis out of view
  // on the left: a copy of the axis, at the plot's scale, stays over the plot's left edge (shown on a phone only).
  return html`<div class="chart-frame"><div class="chart-scroll" tabindex="0" role="group" aria-label="${options.label}, scrolls sideways">
<svg class="chart-plot" viewBox="0 0 ${width} ${height}" role="img" aria-label="${options.label}">${grid}${drawn}</svg></div>
<svg class="chart-axis" viewBox="0 0 ${pad.left} ${height}" aria-hidden="true" focusable="false" data-axis><rect width="${pad.left}" height="${height}" fill="#fff"/><line x1="${pad.left - 0.5}" x2="${pad.left - 0.5}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#e4e7ec"/>${axisLabels}</svg>
<p class="chart-scroll-hint">← Earlier days: scroll the chart sideways.</p></div>`;
}

/** A stacked bar chart of per-day counts by status; every bar has a <title> for its numbers, and a table has them all. */
export function conversionsChart(counts: readonly DailyActionCount[], days: readonly string[]): Html {
  const byDay = new Map<string, Map<string, number>>();
  for (const c of counts) {
    const day = byDay.get(c.day) ?? new Map<string, number>();
    day.set(c.status, (day.get(c.status) ?? 0) + c.count);
    byDay.set(c.day, day);
  }
  const known = new Set(STATUS_COLOURS.map(([s]) => s));
  const segmentsOf = (day: string): Segment[] => {
    const statuses = byDay.get(day) ?? new Map<string, number>();
    return [
      ...STATUS_COLOURS.map(([status, colour]) => [status, colour, statuses.get(status) ?? 0] as const),
      ...[...statuses.entries()].filter(([s]) => !known.has(s)).map(([s, n]) => [s, '#98a2b3', n] as const),
    ].map(([status, colour, n]) => ({ colour, value: n, title: `${day}: ${n} ${status}` }));
  };
  const total = counts.reduce((a, c) => a + c.count, 0);
  const shown = new Set(counts.filter((c) => c.count > 0).map((c) => c.status));
  const legend = STATUS_COLOURS.filter(([s]) => s !== 'erased' || shown.has(s));
  // The table's columns: the legend's statuses, then any other status present.
  const columns = [...legend.map(([s]) => s), ...[...shown].filter((s) => !known.has(s))];
  const rows = days.map((day) => {
    const statuses = byDay.get(day) ?? new Map<string, number>();
    const counts = columns.map((status) => statuses.get(status) ?? 0);
    return [day, ...counts, [...statuses.values()].reduce((a, n) => a + n, 0)];
  });
  return html`<figure class="chart" style="margin:0">
${bars(days, segmentsOf, { height: 200, label: `Deliveries per day by status (each conversion once per destination): ${total} in ${days.length} days`, axis: formatCount })}
<figcaption class="legend">${legend.map(([s, c]) => html`<span><i style="background:${c}"></i>${s}</span>`)}<span>each conversion once per destination it goes to, per day (UTC)</span></figcaption>
</figure>
${chartTable('Deliveries per day by status (UTC)', ['Day', ...columns, 'Total'], rows)}`;
}

/**
 * The reported value per day: one chart per currency, the largest total first (a sum across currencies would mean
 * nothing). Each report counts once, at its latest adjustment (restated value, or 0 once retracted).
 */
export function valueChart(values: readonly DailyValue[], days: readonly string[]): Html {
  const currencies = [...new Set(values.map((v) => v.currency))];
  if (currencies.length === 0) {
    return html`<p class="muted" data-value-chart="empty">No conversion in these ${days.length} days carried a value. Report <code>value</code> and <code>currency</code> with your conversions to see what they are worth.</p>`;
  }
  const totalOf = (currency: string) => values.filter((v) => v.currency === currency).reduce((a, v) => a + v.value, 0);
  currencies.sort((a, b) => totalOf(b) - totalOf(a) || a.localeCompare(b));
  const height = currencies.length === 1 ? 200 : 150;
  const charts = currencies.map((currency) => {
    const byDay = new Map(values.filter((v) => v.currency === currency).map((v) => [v.day, v] as const));
    const segmentsOf = (day: string): Segment[] => {
      const v = byDay.get(day);
      if (!v) return [];
      return [{ colour: VALUE_COLOUR, value: v.value, title: `${day}: ${moneyOf(v.value, currency)} from ${v.conversions} conversion${v.conversions === 1 ? '' : 's'}` }];
    };
    const total = moneyOf(totalOf(currency), currency) ?? currency;
    const conversions = values.filter((v) => v.currency === currency).reduce((a, v) => a + v.conversions, 0);
    const rows = days.map((day) => {
      const v = byDay.get(day);
      return [day, moneyOf(v?.value ?? 0, currency) ?? String(v?.value ?? 0), v?.conversions ?? 0];
    });
    return html`<div><figure class="chart" style="margin:0" data-currency="${currency}">
<figcaption class="chart-head"><strong data-total>${total}</strong> <span class="muted">from ${conversions} conversion${conversions === 1 ? '' : 's'} in ${days.length} days</span></figcaption>
${bars(days, segmentsOf, { height, label: `Value per day in ${currency}: ${total} in ${days.length} days`, axis: (v) => compact(v) })}
</figure>
${chartTable(`Value per day in ${currency} (UTC)`, ['Day', `Value (${currency})`, 'Conversions'], rows)}</div>`;
  });
  return html`<div class="value-charts">${charts}<p class="legend"><span><i style="background:${VALUE_COLOUR}"></i>reported value</span><span>once per conversion report, as restated or retracted, per day (UTC)${currencies.length > 1 ? '; one chart per currency, never added together' : ''}</span></p></div>`;
}

/** The axis' top: 4 at least, else a round number whose half (the middle grid line) is a whole one too (never 12.5). */
function niceCeiling(value: number): number {
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 3, 4, 6, 8, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function formatCount(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** An axis amount, short: 250, 2.5K, 1.2M. */
function compact(value: number): string {
  return new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}
