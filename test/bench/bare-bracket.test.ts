import { describe, expect, it } from 'vitest';

type Window = { requests_per_s: number; cpu_us_per_request: number | null; machine: { steal: number; idle: number; busy: number } | null; service_busy?: true };
type Bracket = Window & { windows?: { before: Window; after: Window } };
// bench/ingest.mjs is plain JavaScript: imported by URL, typed here by what the test reads.
const ingest = (await import(new URL('../../bench/ingest.mjs', import.meta.url).href)) as {
  bracketBare: (before: Window, after?: Window) => Bracket;
  ratioLine: (r: { ratio_to_bare: number | null; bare: Bracket }) => string;
};

const quiet = { steal: 0, idle: 0.2, busy: 0.8 };
const stolen = { steal: 0.2, idle: 0, busy: 0.8 };

describe("the bare route's figure for a service window between two bare windows", () => {
  it('is the mean rate and CPU per request of the windows before and after, with the worse machine of the two', () => {
    const before: Window = { requests_per_s: 18_000, cpu_us_per_request: 40, machine: quiet };
    const after: Window = { requests_per_s: 12_000, cpu_us_per_request: 44, machine: stolen };
    const bare = ingest.bracketBare(before, after);
    expect(bare).toMatchObject({ requests_per_s: 15_000, cpu_us_per_request: 42, machine: stolen, windows: { before, after } });
    expect(ingest.ratioLine({ ratio_to_bare: 6_000 / 15_000, bare })).toBe(
      "service / bare: 0.40x (of the mean of the bare route's windows before and after, 18,000 and 12,000/s)",
    );
  });

  it('says so beside the ratio when the service was still busy as the window after began', () => {
    const before: Window = { requests_per_s: 18_000, cpu_us_per_request: 40, machine: quiet };
    const after: Window = { requests_per_s: 12_000, cpu_us_per_request: 44, machine: quiet, service_busy: true };
    expect(ingest.ratioLine({ ratio_to_bare: 0.4, bare: ingest.bracketBare(before, after) })).toMatch(
      /and 12,000\/s\); the service was still busy when the window after began, so that window was slowed and the ratio flatters the service$/,
    );
  });

  it('is the window before as it is when there is none after', () => {
    const before: Window = { requests_per_s: 18_000, cpu_us_per_request: 40, machine: quiet };
    expect(ingest.bracketBare(before)).toBe(before);
    expect(ingest.ratioLine({ ratio_to_bare: 0.3, bare: before })).toBe('service / bare: 0.30x');
  });
});
