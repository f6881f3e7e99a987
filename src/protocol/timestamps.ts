/**
 * The shape of an ISO 8601 date-time as the protocol takes it: a date, a time (seconds and fractions optional) and a
 * time zone, `Z` or an offset (`2026-11-21T09:30:00Z`, `2026-11-21T10:30:00.000+01:00`). A time without a zone names no
 * instant: read in the reader's own zone, it would move by that zone's offset. The service checks the calendar too
 * (server/http/timestamps.ts).
 */
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
