/** What an `unsupported` adjustment result says: why the platform cannot take it, and what the user can do instead. */
import { describe, expect, it } from 'vitest';
import { adjustmentOutcomeOf, adjustmentsUnsupported, consentDenied, platformFor } from '../../../src/server/destinations';

const NEXT_STEP = /keeps the conversion as it was sent: use the corrected value cnv keeps \(the event's current_value, the dashboard's Value\) in your own reports\. An adjustment that arrives before a conversion is first sent is applied to that send \(a retracted one is not sent\)\.$/;

describe('the reason of an adjustment a platform cannot take', () => {
  it.each(['meta', 'linkedin', 'reddit', 'tiktok'])('on %s says why, then what to do instead, once', (type) => {
    const platform = platformFor(type)!;
    expect(platform.adjustBatch).toBeUndefined();
    const reason = adjustmentsUnsupported(platform);
    expect(reason.startsWith(platform.adjustmentsUnsupportedReason!)).toBe(true);
    expect(reason).toMatch(new RegExp(` ${platform.label} ${NEXT_STEP.source}`));
    expect(reason).not.toContain('stays in cnv only');
    expect(reason.match(/current_value/g)).toHaveLength(1);
  });

  it('names the next step for a platform that gives no reason of its own too', () => {
    expect(adjustmentsUnsupported({ label: 'Example Ads' })).toMatch(
      new RegExp(`^Example Ads defines no operation that changes or takes back a conversion it has received\\. Example Ads ${NEXT_STEP.source}`),
    );
  });

  it("keeps the hint of a consent skip (what to do, if anything), not only its message", () => {
    const reason = consentDenied('Microsoft Advertising', 'the click id and hashed email or phone are user data.');
    const outcome = adjustmentOutcomeOf({ kind: 'skipped', reason });
    expect(outcome).toEqual({ kind: 'unsupported', reason: `${reason.message} ${reason.hint}` });
    expect(outcome.kind === 'unsupported' && outcome.reason).toMatch(/Nothing to fix: this is the visitor’s choice\.$/);
  });
});
