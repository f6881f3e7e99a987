/**
 * Money as people read it, everywhere cnv shows a conversion's value (dashboard, demo): the ISO 4217 code, a space,
 * and the amount with the currency's own minor digits, e.g. `EUR 29.90`, `JPY 4,900`, `USD 1,250.00`, or more when the
 * value has more (`JPY 12.5`: what was reported and sent, never rounded). Never an ambiguous symbol ($ is a dozen
 * currencies), and never a sum across currencies.
 */

/** A value with its currency, e.g. `EUR 29.90`; null when there is no number. */
export function moneyOf(value: unknown, currency: unknown): string | null {
  if (typeof value !== 'number' && typeof value !== 'string') return null;
  if (typeof value === 'string' && value.trim() === '') return null;
  const amount = Number(value);
  if (!Number.isFinite(amount)) return null;
  const code = typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : null;
  try {
    if (code) return new Intl.NumberFormat('en', { style: 'currency', currency: code, currencyDisplay: 'code', maximumFractionDigits: 6 }).format(amount).replace(/\u00a0/g, ' ');
  } catch {
    // A code Intl does not know: the plain number with it.
  }
  return `${code ?? ''} ${amount.toLocaleString('en', { maximumFractionDigits: 6 })}`.trim();
}
