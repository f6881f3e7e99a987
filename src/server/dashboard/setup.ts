/**
 * The setup checklist: the seven steps from a new account to its first delivered conversion, each ticked from the
 * account's real state (never from a click on the checklist), each with the place on the dashboard that does it.
 */

/** What the checklist reads of the account. */
export interface SetupState {
  sites: ReadonlyArray<{ id: string; name: string; domain: string | null; loaderSeen: boolean; hasWebhookSecret: boolean }>;
  /** Connected destinations (status connected), by platform label. */
  connectedDestinations: readonly string[];
  flows: ReadonlyArray<{ id: string; status: string; trigger: 'api' | 'form' }>;
  /** An event with a delivered action, if any. */
  firstDeliveredEventId: string | null;
}

export type SetupStepId = 'domain' | 'install' | 'destination' | 'backend' | 'flow' | 'publish' | 'conversion';

export interface SetupStep {
  id: SetupStepId;
  title: string;
  /** What the step is for and how to do it, in a sentence. */
  detail: string;
  /** What the account has done, once done. */
  doneText?: string;
  done: boolean;
  /** The place that does it (or shows it done). */
  href: string;
  /** The label of that link. */
  action: string;
}

/** The steps in the order a new user takes them. */
export function setupSteps(state: SetupState): SetupStep[] {
  const withDomain = state.sites.filter((s) => s.domain);
  const needsDomain = state.sites.find((s) => !s.domain) ?? state.sites[0];
  const seen = state.sites.find((s) => s.loaderSeen);
  const toInstall = withDomain[0] ?? state.sites[0];
  const formFlow = state.flows.some((f) => f.trigger === 'form');
  const withSecret = state.sites.find((s) => s.hasWebhookSecret);
  const needsSecret = withDomain.find((s) => !s.hasWebhookSecret) ?? state.sites[0];
  const live = state.flows.filter((f) => f.status === 'live');
  const draft = state.flows.find((f) => f.status !== 'live');
  const siteAnchor = (site: { id: string } | undefined, suffix = '') => (site ? `/dashboard/sites#${suffix}${site.id}` : '/dashboard/sites');
  return [
    {
      id: 'domain',
      title: "Set your site's domain",
      detail: 'The domain decides which pages may send click data to cnv; subdomains are covered too.',
      ...(withDomain[0] ? { doneText: `${withDomain[0].name}: ${withDomain[0].domain}` } : {}),
      done: withDomain.length > 0,
      href: siteAnchor(withDomain[0] ?? needsDomain),
      action: withDomain.length > 0 ? 'See sites' : 'Set the domain',
    },
    {
      id: 'install',
      title: 'Install the snippet on your site',
      detail: 'Paste one script tag into every page. This step ticks itself when the first page view arrives.',
      ...(seen ? { doneText: `Page views arrive from ${seen.name}.` } : {}),
      done: Boolean(seen),
      href: siteAnchor(seen ?? toInstall, 'install-'),
      action: seen ? 'See the install check' : 'Get the snippet',
    },
    {
      id: 'destination',
      title: 'Connect an ad platform',
      detail: 'Connect the ad platform that gets your conversions: Google Ads, Meta, Microsoft Advertising, LinkedIn, Reddit or TikTok.',
      ...(state.connectedDestinations.length > 0 ? { doneText: `Connected: ${state.connectedDestinations.join(', ')}.` } : {}),
      done: state.connectedDestinations.length > 0,
      href: '/dashboard/destinations',
      action: state.connectedDestinations.length > 0 ? 'See destinations' : 'Connect a platform',
    },
    {
      id: 'backend',
      title: 'Connect your backend',
      detail:
        'Create the webhook secret your server signs its signup reports with. (A flow with a form trigger needs no backend: the snippet sees the form.)',
      ...(withSecret ? { doneText: `${withSecret.name} has a webhook secret.` } : formFlow ? { doneText: 'Your form-trigger flow needs no backend.' } : {}),
      done: Boolean(withSecret) || formFlow,
      href: `/dashboard/flows#backend-${(withSecret ?? needsSecret)?.id ?? ''}`,
      action: withSecret || formFlow ? 'See the webhook secret' : 'Create the webhook secret',
    },
    {
      id: 'flow',
      title: 'Create a flow',
      detail: 'A flow says which conversions (signups from your backend, or a form) go to which ad platforms.',
      ...(state.flows.length > 0 ? { doneText: `${state.flows.length} flow${state.flows.length === 1 ? '' : 's'}.` } : {}),
      done: state.flows.length > 0,
      href: state.flows.length > 0 ? '/dashboard/flows' : '/dashboard/flows#new-flow',
      action: state.flows.length > 0 ? 'See flows' : 'Create a flow',
    },
    {
      id: 'publish',
      title: 'Publish the flow',
      detail: 'A draft delivers nothing. The Flows page lists anything still missing before it can go live.',
      ...(live.length > 0 ? { doneText: `${live.length} live flow${live.length === 1 ? '' : 's'}.` } : {}),
      done: live.length > 0,
      href: live[0] ? `/dashboard/flows#${live[0].id}` : draft ? `/dashboard/flows#${draft.id}` : '/dashboard/flows',
      action: live.length > 0 ? 'See flows' : 'Publish',
    },
    {
      id: 'conversion',
      title: 'First conversion delivered',
      detail: 'Sign up on your site (or submit the form): the conversion reaches your ad platform and this list is done.',
      ...(state.firstDeliveredEventId ? { doneText: 'Your first conversion reached the ad platform.' } : {}),
      done: state.firstDeliveredEventId !== null,
      href: state.firstDeliveredEventId ? `/dashboard/events/${state.firstDeliveredEventId}` : '/dashboard/events',
      action: state.firstDeliveredEventId ? 'Trace it' : 'Watch events',
    },
  ];
}
