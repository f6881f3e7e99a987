/** Plain-text tables for the terminal: a header row, aligned columns, numbers right-aligned. */

/** Formats rows (arrays of cells) under a header as an aligned table string. */
export function formatTable(header, rows) {
  const cells = [header, ...rows].map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell))));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]?.length ?? 0)));
  const numeric = header.map((_, i) => rows.every((row) => row[i] === null || row[i] === undefined || /^[-+]?[\d.,]+/.test(String(row[i])) || row[i] === '-'));
  const line = (row) =>
    row.map((cell, i) => (numeric[i] && i > 0 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join('\n');
}

/** A number with thousands separators and a fixed count of decimals. */
export function num(value, decimals = 0) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/**
 * A ratio as `0.42x`, or `-` when there is none. Cut to two decimals, never rounded up, so a ratio printed beside a
 * target never reads as meeting it when it does not (0.3496 is `0.34x`, not a `0.35x` marked NOT MET).
 */
export function times(value) {
  return value === null || value === undefined || !Number.isFinite(value) ? '-' : `${(Math.floor(value * 100 + 1e-9) / 100).toFixed(2)}x`;
}

/** The mark printed beside a target. */
export function mark(met) {
  return met === null || met === undefined ? 'n/a' : met ? 'met' : 'NOT MET';
}
