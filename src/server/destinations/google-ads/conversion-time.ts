/** A conversion's time as Google Ads wants it: `yyyy-mm-dd hh:mm:ss+hh:mm`, wall-clock time in a given timezone. */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    // Throws RangeError for an unknown zone: the caller turns that into a clear, permanent error.
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(instant: Date, timeZone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The UTC offset of `timeZone` at `instant`, in minutes (east positive): the zone's wall clock read as if it were UTC,
 * minus the instant. Computed per instant, so daylight saving time is right on both sides of a change.
 */
export function utcOffsetMinutes(instant: Date, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  const wholeSeconds = Math.floor(instant.getTime() / 1000) * 1000;
  return Math.round((asUtc - wholeSeconds) / 60_000);
}

/** Formats an instant as `yyyy-mm-dd hh:mm:ss+hh:mm` in `timeZone` (an IANA name such as `America/New_York`). */
export function formatConversionDateTime(instant: Date, timeZone: string): string {
  if (Number.isNaN(instant.getTime())) throw new RangeError('conversion time is not a valid date');
  const w = wallClock(instant, timeZone);
  const offset = utcOffsetMinutes(instant, timeZone);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)} ${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}
