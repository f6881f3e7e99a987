/**
 * The forms script's side of the hook with the core loader (src/loader/optional.ts): runs the detectors of the
 * config's forms while the core allows it, and turns each successful submission on a page that one of the config's
 * page filters matches into the body of `POST …/form-submissions`, which the core sends with the page's context (touch,
 * platform cookies, page, referrer, time, Consent Mode's signals), like a snapshot. No correlation cookie: the submission itself becomes the
 * event (the service deduplicates on its submission_id), so there is no later report to pair with.
 */
import type { FormWatch } from '../protocol/collector';
import type { FormSubmissionPayload } from '../protocol/forms';
import { pageFilterMatches } from '../protocol/page-filter';
import type { PageContext } from '../loader/collector-body';
import type { OptionalExports } from '../loader/optional';
import { randomId } from '../loader/random-id';
import { startFormDetectors, type DetectedSubmission } from './index';

/** What the forms script sends; the core adds the page's context. */
export type SubmissionBody = Omit<FormSubmissionPayload, keyof PageContext>;

/**
 * The body for one detected submission made on win's page (the core adds the page's context and consent); null when
 * no watch of its integration has a page filter that matches the page (the service would count it for no flow, so its
 * fields are not sent at all).
 */
export function submissionBody(submission: DetectedSubmission, watches: readonly FormWatch[], win: Window = window): SubmissionBody | null {
  const pageUrl = win.location.href;
  const watched = watches.some((watch) => watch.integration === submission.integration && pageFilterMatches(watch.page_filter, pageUrl));
  return watched
    ? {
        submission_id: randomId(),
        integration: submission.integration,
        form_id: submission.form_id,
        fields: submission.fields,
      }
    : null;
}

/** The DOM event the page hears for each submission reported: its browser tags take the same id as cnv's conversion. */
export const SUBMISSION_EVENT = 'service:form-submission';

/**
 * Tells the page the submission's id, as a `service:form-submission` event on `window` whose `detail` is
 * `{submission_id, integration, form_id}`. cnv sends each platform `submission_id` as the conversion's dedup id (Meta's
 * and TikTok's `event_id`, LinkedIn's `eventId`, Reddit's `conversion_id`), and the page has no other way to learn it:
 * a browser pixel that fires from this event with the same id counts once with cnv's copy instead of twice. A listener
 * that throws is the page's (dispatchEvent reports it and returns); a browser without CustomEvent just hears nothing.
 */
function announce(body: SubmissionBody, win: Window): void {
  try {
    win.dispatchEvent(new CustomEvent(SUBMISSION_EVENT, { detail: { submission_id: body.submission_id, integration: body.integration, form_id: body.form_id } }));
  } catch {
    // never into the page
  }
}

/**
 * The function the forms script hands to the core: called after every change of consent, it starts the detectors of
 * the watched integrations (each once) when `on` and they are not running, and stops them when not `on`. A restart
 * (consent withdrawn, then given again) reports nothing its detectors find while starting: a confirmation already on
 * the page then (Gravity Forms', WPForms') was reported by the first start, or appeared while consent was withdrawn,
 * and must not come back as a new lead with a new submission_id.
 */
export function formsRunner(doc: Document = document, win: Window = window): OptionalExports['forms'] {
  let stop: (() => void) | undefined;
  let started = false;
  return (on, watches, send) => {
    if (on && !stop) {
      const integrations = watches.map((watch) => watch.integration);
      let restarting = started;
      started = true;
      stop = startFormDetectors(
        integrations,
        (submission) => {
          const body = !restarting && submissionBody(submission, watches, win);
          if (body) {
            send('form-submissions', body);
            announce(body, win);
          }
        },
        doc,
        win,
      );
      restarting = false;
    } else if (!on && stop) {
      stop();
      stop = undefined;
    }
  };
}
