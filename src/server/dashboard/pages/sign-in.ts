/** Pages shown without a session: a sign-in link refused, a page that needs a session, an error. */
import { csrfField, html, layout, when } from '../layout';
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
 * What a sign-in link shows when opened: whose dashboard it opens and until when, and a button that signs in. Opening
 * the link spends nothing (link previewers and mail scanners open links too: they must neither use it up nor be the
 * ones signed in), and a browser is never signed in to an account without its person asking: a link sent from
 * elsewhere would otherwise put them in the sender's account, where they would connect their own ad platforms. The
 * token goes in the form's body, not its address. A browser signed in to another account is asked whether to switch.
 */
export function signInConfirmPage(target: { accountId: string; accountName: string; expiresAt: Date }, token: string, session: DashboardSession | null): string {
  const other = session !== null && session.accountId !== target.accountId ? session : null;
  const body = other
    ? html`<h1>Switch to another account?</h1>
<p>This sign-in link opens the account <strong>${target.accountName}</strong>. This browser is signed in to <strong>${other.accountName}</strong>.</p>
<p class="hint">Switch only if you asked for this link yourself: anything you connect or change next goes to the account you are signed in to.</p>`
    : html`<h1>Sign in to cnv</h1>
<p>Sign in to the cnv dashboard of the account <strong>${target.accountName}</strong>.</p>
<p class="hint">Sign in only if you asked for this link yourself: anything you connect or change next goes to this account.</p>`;
  return layout(
    { title: other ? 'Switch account' : 'Sign in', nav: null, session },
    html`<section class="card sign-in">${body}
<form method="post" action="${SIGN_IN_PATH}">${session ? csrfField(session) : ''}<input type="hidden" name="token" value="${token}"><button type="submit">${other ? `Sign in to ${target.accountName}` : 'Sign in'}</button></form>
<p class="hint">The link works once, until ${when(target.expiresAt)}.</p>${
      session ? html`<p><a href="/">${other ? `Stay in ${other.accountName}` : 'Back to the dashboard'}</a></p>` : ''
    }</section>`,
  );
}
