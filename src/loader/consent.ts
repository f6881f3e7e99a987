/** Consent: whether the loader may write cookies, use storage and send anything. */

/** Every input the decision depends on. Any refusal wins; a grant only matters where one is required. */
export interface ConsentState {
  /** data-consent-required on the tag: nothing until consent(true). */
  required: boolean;
  /** The page's last consent(granted) call, if any. */
  choice?: boolean;
  /** Whether the page's Google Consent Mode commands currently deny ad_storage. */
  adDenied?: boolean;
  /** The site config's honor_gpc (true unless it says false). */
  honorGpc?: boolean;
}

/** Whether the loader may write and send, given the state and the browser's Global Privacy Control signal. */
export function consentAllowed(state: ConsentState, gpc: boolean): boolean {
  return (
    state.choice !== false && (state.choice || !state.required) && !state.adDenied && !(gpc && state.honorGpc)
  );
}
