/** ISO 8601 timestamps as the protocol sends them (`2026-11-21T09:30:00.000Z`, or with an offset). */

const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** Whether a value is an ISO 8601 date-time with a time zone that names a real calendar instant. */
export function isIsoTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = ISO_TIMESTAMP.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((part) => Number(part ?? 0));
  // Date.parse rolls 2026-02-31 over into March; PostgreSQL would refuse it: check the calendar ourselves.
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return (
    month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth && hour! <= 23 && minute! <= 59 && second! <= 59 &&
    offsetHours! <= 23 && offsetMinutes! <= 59 && Number.isFinite(Date.parse(value))
  );
}

/**
 * An ISO 8601 timestamp PostgreSQL stores too (no year 0000, offsets within ±15:59), so a bad value is a 400, not a
 * failed write. The `date-time` format of every schema is this check.
 */
export function isStorableTimestamp(value: unknown): value is string {
  if (!isIsoTimestamp(value) || value.startsWith('0000')) return false;
  const offset = /([+-])(\d{2}):\d{2}$/.exec(value);
  return !offset || Number(offset[2]) <= 15;
}
