/** The events chart: conversions per day, stacked by the delivery status of each destination, as inline SVG. */
import { html, type Html } from './layout';
import type { DailyActionCount } from './sql';

/** Status colours, in stacking order (bottom first). */
export const STATUS_COLOURS: ReadonlyArray<readonly [string, string]> = [
  ['delivered', '#12b76a'],
  ['queued', '#f79009'],
  ['failed', '#f04438'],
];

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

/** A stacked bar chart of per-day counts by status; every bar has a <title> for its numbers. */
export function conversionsChart(counts: readonly DailyActionCount[], days: readonly string[]): Html {
  const width = 720;
  const height = 200;
  const pad = { left: 34, right: 8, top: 10, bottom: 26 };
  const byDay = new Map<string, Map<string, number>>();
  for (const c of counts) {
    const day = byDay.get(c.day) ?? new Map<string, number>();
    day.set(c.status, (day.get(c.status) ?? 0) + c.count);
    byDay.set(c.day, day);
  }
  const totals = days.map((d) => [...(byDay.get(d)?.values() ?? [])].reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...totals);
  const top = niceCeiling(max);
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(4, slot * 0.62);
  const y = (value: number) => pad.top + plotH - (value / top) * plotH;
  const grid = [0, top / 2, top].map(
    (v) => html`<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#e4e7ec"/><text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11" fill="#5b6475">${formatCount(v)}</text>`,
  );
  const bars = days.map((day, i) => {
    const x = pad.left + i * slot + (slot - barW) / 2;
    let base = 0;
    const statuses = byDay.get(day) ?? new Map<string, number>();
    const known = new Set(STATUS_COLOURS.map(([s]) => s));
    const segments = [
      ...STATUS_COLOURS.map(([status, colour]) => [status, colour, statuses.get(status) ?? 0] as const),
      ...[...statuses.entries()].filter(([s]) => !known.has(s)).map(([s, n]) => [s, '#98a2b3', n] as const),
    ].filter(([, , n]) => n > 0);
    const rects = segments.map(([status, colour, n]) => {
      const rect = html`<rect x="${x.toFixed(1)}" y="${y(base + n).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - y(base + n)).toFixed(1)}" fill="${colour}"><title>${day}: ${n} ${status}</title></rect>`;
      base += n;
      return rect;
    });
    const label = (days.length - 1 - i) % Math.ceil(days.length / 7) === 0
      ? html`<text x="${(x + barW / 2).toFixed(1)}" y="${height - 8}" text-anchor="middle" font-size="11" fill="#5b6475">${day.slice(5)}</text>`
      : '';
    return html`${rects}${label}`;
  });
  const total = totals.reduce((a, b) => a + b, 0);
  return html`<figure class="chart" style="margin:0" tabindex="0">
<svg viewBox="0 0 ${width} ${height}" role="img" aria-label="Conversions per day by delivery status: ${total} in ${days.length} days">${grid}${bars}</svg>
<figcaption class="legend">${STATUS_COLOURS.map(([s, c]) => html`<span><i style="background:${c}"></i>${s}</span>`)}<span>per destination, per day (UTC)</span></figcaption>
</figure>`;
}

function niceCeiling(value: number): number {
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function formatCount(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}
