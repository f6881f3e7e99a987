/** Pages shown without a session: a sign-in link refused, a page that needs a session, an error. */
import { html, layout } from '../layout';
import { SIGN_IN_PATH, type DashboardSession } from '../sessions';

const HOW = html`<p>Get a fresh sign-in link on the machine that runs cnv, with one of your API keys:</p>
<pre>CNV_API_KEY=cnv_sk_… npx cnv dashboard</pre>
<p class="hint">It prints a link that works once, for 15 minutes. The service prints one too at its first start, and at every start in a terminal. With the service stopped, <code>npx cnv dashboard</code> needs no key.</p>`;

const REASONS = {
  used: 'This sign-in link was already used. Each link works once.',
  expired: 'This sign-in link has expired: links work for 15 minutes.',
  unknown: 'This sign-in link is not valid.',
} as const;

/** A sign-in link that did not work, and how to get a new one. */
export function signInRefusedPage(reason: keyof typeof REASONS): string {
  return layout(
    { title: 'Sign in', nav: null, session: null },
    html`<section class="card sign-in"><h1>Sign in to cnv</h1><div class="notice bad" role="alert">${REASONS[reason]}</div>${HOW}</section>`,
  );
}

/** A dashboard page asked for without a session (never signed in, signed out, or expired). */
export function signInNeededPage(signedOut = false): string {
  return layout(
    { title: 'Sign in', nav: null, session: null },
    html`<section class="card sign-in"><h1>Sign in to cnv</h1>${
      signedOut ? html`<div class="notice good" role="status">You are signed out.</div>` : html`<p>The dashboard needs a sign-in link.</p>`
    }${HOW}</section>`,
  );
}

/**
 * An error page (404, 400, 403, 500, 503) with a way back: the dashboard when signed in; else how to sign in, unless the
 * service itself cannot work now (503: a new sign-in link would meet the same store), where reloading later is the way.
 */
export function errorPage(status: number, title: string, message: string, session: DashboardSession | null): string {
  const way = session
    ? html`<a href="/">Back to the dashboard</a>`
    : status === 503
      ? html`Reload this page in a minute, once the service works again.`
      : HOW;
  return layout(
    { title, nav: null, session },
    html`<section class="card"><h1>${title}</h1><div class="notice bad" role="alert">${message}</div>
<p>${way} <span class="hint">(HTTP ${status})</span></p></section>`,
  );
}

/**
 * A sign-in link for another account than the one this browser is signed in to: nothing changes until the person
 * confirms (a form of the current session, so another site cannot switch a visitor's dashboard to its own account).
 */
export function switchAccountPage(session: DashboardSession, target: { accountName: string }, token: string): string {
  return layout(
    { title: 'Switch account', nav: null, session },
    html`<section class="card sign-in"><h1>Switch to another account?</h1>
<p>This sign-in link opens the account <strong>${target.accountName}</strong>. This browser is signed in to <strong>${session.accountName}</strong>.</p>
<p class="hint">Switch only if you asked for this link yourself: anything you connect or change next goes to the account you are signed in to.</p>
<form method="post" action="${SIGN_IN_PATH}"><input type="hidden" name="_csrf" value="${session.csrfToken}"><input type="hidden" name="token" value="${token}"><button type="submit">Sign in to ${target.accountName}</button></form>
<p><a href="/">Stay in ${session.accountName}</a></p></section>`,
  );
}
