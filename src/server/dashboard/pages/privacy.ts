/**
 * The personal data page: erase a person (a form, then a confirmation that says what will be removed), the erasures
 * made (never the values), and how long identity is kept.
 */
import type { ErasureCounts, ErasureRecord } from '../../api/erasures';
import { csrfField, fieldAttributes, fieldError, formErrorSummary, html, layout, when, type Html, type Notice } from '../layout';
import type { DashboardSession } from '../sessions';
import { MAX_IDENTITY_FIELD_LENGTH } from '../../../protocol/identity';
import { CUSTOMER_ID_MAX } from '../../../protocol/webhook';

/** The person as typed in the form (shown back only on the confirmation and on an error, never after the erasure). */
export interface ErasureForm {
  email: string;
  phone: string;
  customer_id: string;
}

export interface PrivacyPageData {
  erasures: readonly ErasureRecord[];
  retentionDays: number;
  /** A form refused, with the message and what was typed. */
  error?: { message: string; param?: string; values: ErasureForm };
  /** A confirmation to give: what an erasure of this person would remove. */
  confirm?: { values: ErasureForm; counts: ErasureCounts };
}

const EMPTY: ErasureForm = { email: '', phone: '', customer_id: '' };

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function countsText(counts: ErasureCounts): string {
  return [
    plural(counts.reports, 'report', 'reports'),
    plural(counts.events, 'event', 'events'),
    plural(counts.snapshots, 'browser snapshot', 'browser snapshots'),
    plural(counts.form_submissions, 'form submission', 'form submissions'),
  ].join(', ');
}

const FIELDS: readonly (keyof ErasureForm)[] = ['email', 'phone', 'customer_id'];

/** The longest value each field takes, as the REST route checks it. */
const MAX_LENGTH: Record<keyof ErasureForm, number> = { email: MAX_IDENTITY_FIELD_LENGTH, phone: MAX_IDENTITY_FIELD_LENGTH, customer_id: CUSTOMER_ID_MAX };

/** The fields as the form labels them, for messages that name the API's parameters. */
const FIELD_WORDS: Record<keyof ErasureForm, string> = { email: 'The email', phone: 'The phone number', customer_id: 'The customer id' };

/**
 * A refusal in the form's words: what to type, with the form's labels, not the API's parameter names (the REST route's
 * messages name `customer_id` and say `phone must be…`). An empty form names no field: its message stands above the
 * form alone, not on the email.
 */
export function erasureRefusalInWords(refusal: { message: string; param?: string | undefined }): { message: string; param?: string } {
  const { message, param } = refusal;
  if (/^Name the person to erase/.test(message)) return { message: 'Give at least one of email, phone and customer id.' };
  const words = (text: string) => ({ message: text, ...(param ? { param } : {}) });
  if (/^email must be the address alone/.test(message)) return words('Enter the address alone, without mailto: (e.g. name@example.com).');
  if (/^email must be one email address/.test(message)) return words('Enter one email address, e.g. name@example.com.');
  if (/^phone must be a phone number/.test(message)) return words('Enter the phone number with its country code, starting with + or 00, e.g. +1 202 555 0143.');
  const tooLong = /^Invalid parameter '(email|phone|customer_id)': it must be at most (\d+) characters/.exec(message);
  if (tooLong) return words(`${FIELD_WORDS[tooLong[1] as keyof ErasureForm]} must be at most ${tooLong[2]} characters.`);
  const named = /^(email|phone|customer_id) (.*)$/s.exec(message);
  return words(named ? `${FIELD_WORDS[named[1] as keyof ErasureForm]} ${named[2]}` : message);
}

function field(id: keyof ErasureForm, label: string, hint: string, type: string, values: ErasureForm, error: PrivacyPageData['error']): Html {
  const invalid = error?.param === id;
  return html`<label for="erase-${id}">${label} <span class="hint">${hint}</span><input type="${type}" id="erase-${id}" name="${id}" value="${values[id]}" maxlength="${MAX_LENGTH[id]}" autocomplete="off"${fieldAttributes(`erase-${id}`, [], invalid)}></label>
${fieldError(`erase-${id}`, invalid ? error!.message : null)}`;
}

function erasureForm(session: DashboardSession, values: ErasureForm, error: PrivacyPageData['error']): Html {
  return html`<form method="post" action="/dashboard/privacy/preview">
${csrfField(session)}
<div class="fields">
<div>${field('email', 'Email', 'Matched trimmed and lower-cased.', 'text', values, error)}</div>
<div>${field('phone', 'Phone', 'With its country code, e.g. +1 202 555 0143.', 'text', values, error)}</div>
<div>${field('customer_id', 'Customer id', 'Your id of the customer, as your backend reported it.', 'text', values, error)}</div>
</div>
<div class="actions"><button type="submit">Find what would be erased</button></div>
</form>`;
}

function confirmation(session: DashboardSession, data: NonNullable<PrivacyPageData['confirm']>): Html {
  const { values, counts } = data;
  const total = counts.reports + counts.events + counts.snapshots + counts.form_submissions;
  const named = [values.email && 'email', values.phone && 'phone', values.customer_id && 'customer id'].filter(Boolean).join(', ');
  return html`<section class="card" id="confirm" aria-labelledby="confirm-title">
<h2 id="confirm-title">Erase this person?</h2>
${
  total === 0
    ? html`<p>Nothing of this person (${named}) is stored in any site of this account. Erasing still records that the request was made, without the values.</p>`
    : html`<p>This removes, in every site of this account, what is stored under this ${named}:</p>
<ul>
<li><strong>${plural(counts.reports, 'report', 'reports')}</strong> from your backend: email, phone, names and customer id cleared.</li>
<li><strong>${plural(counts.events, 'event', 'events')}</strong>: email, click ids, page and landing addresses, and what was sent to ad platforms cleared. They stay as anonymous conversions; sends not made yet are cancelled.</li>
<li><strong>${plural(counts.snapshots, 'browser snapshot', 'browser snapshots')}</strong> deleted: IP address, browser, ad click and cookies.</li>
<li><strong>${plural(counts.form_submissions, 'form submission', 'form submissions')}</strong>: form fields, IP address and browser cleared.</li>
</ul>`
}
<p class="hint">It cannot be undone. Rows found only under another email or phone number of the person are not matched: erase each value you hold (you may give email, phone and customer id together). Conversions already delivered to ad platforms are not called back: ask each platform to delete them (see docs/personal-data.md).</p>
<form method="post" action="/dashboard/privacy/erase">
${csrfField(session)}
<input type="hidden" name="email" value="${values.email}">
<input type="hidden" name="phone" value="${values.phone}">
<input type="hidden" name="customer_id" value="${values.customer_id}">
<div class="actions"><button type="submit" class="danger">Erase permanently</button> <a class="button secondary" href="/dashboard/privacy">Cancel</a></div>
</form>
</section>`;
}

/** The personal data page. */
export function privacyPage(session: DashboardSession, data: PrivacyPageData, notices: Notice[] = []): string {
  const values = data.error?.values ?? data.confirm?.values ?? EMPTY;
  const error = data.error && { ...erasureRefusalInWords(data.error), values: data.error.values };
  return layout(
    { title: 'Personal data', nav: 'privacy', session, notices },
    html`<h1>Personal data</h1>
<p class="lead">Erase a person on request, in every site of this account at once. Email, phone, names and customer ids are kept ${data.retentionDays} days (CNV_IDENTITY_RETENTION_DAYS), then cleared.</p>
${data.confirm ? confirmation(session, data.confirm) : ''}
<section class="card">
<h2>Erase a person</h2>
<p class="hint">Give at least one of email, phone and customer id. You will see what would be removed before anything is.</p>
${error ? formErrorSummary('erase-error', error.message, FIELDS.includes(error.param as keyof ErasureForm) ? `erase-${error.param}` : undefined) : ''}
${erasureForm(session, values, error)}
</section>
<section class="card">
<h2>Erasures</h2>
${
  data.erasures.length === 0
    ? html`<p class="muted">No erasures yet.</p>`
    : html`<p class="hint">The erased values are never stored: a keyed hash recognises a request made again.</p>
<div class="table-wrap"><table class="stack"><thead><tr><th>When</th><th>Given</th><th>Removed</th><th>Repeat of</th></tr></thead><tbody>
${data.erasures.map(
  (e) => html`<tr id="${e.id}"><td data-label="When">${when(e.created_at)}</td><td data-label="Given">${e.fields.join(', ').replace('customer_id', 'customer id')}</td>
<td data-label="Removed">${countsText(e.matched)}</td><td data-label="Repeat of">${e.repeat_of ? html`<code>${e.repeat_of}</code>` : html`<span class="muted">—</span>`}</td></tr>`,
)}</tbody></table></div>`
}
</section>`,
  );
}
