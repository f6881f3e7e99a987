/**
 * Tests a LinkedIn connection without recording a conversion: the Conversions API has no validate-only mode, so the
 * test reads what sending depends on. It lists the member's ad account roles (the token works, `r_ads` was granted,
 * the member holds a role other than viewer on the connected account: LinkedIn's two conditions for a successful
 * call) and the account's conversion rules (to say how many use the Conversions API).
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api
 * https://learn.microsoft.com/en-us/linkedin/marketing/conversions/conversions-workflow
 */
import { OAuthClientRefused, ReauthorizationRequired, type ConnectionTestResult, type SendContext } from '../destination';
import { parseJson, requestJson } from '../http';
import { AD_ACCOUNT_URN_PREFIX, parseAdAccountId } from './connect';
import { LINKEDIN_LABEL, linkedInHeaders } from './request';
import { readErrorBody, verdictOf } from './response';

/** Ad account roles that may send conversions (the conversions-api page's list; VIEWER may not). */
export const SENDING_ROLES = new Set(['ACCOUNT_BILLING_ADMIN', 'ACCOUNT_MANAGER', 'CAMPAIGN_MANAGER', 'CREATIVE_MANAGER']);

function elementsOf(text: string): Record<string, unknown>[] {
  const body = parseJson(text) as { elements?: unknown } | null;
  return Array.isArray(body?.elements) ? body.elements.filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object') : [];
}

async function get(url: string, token: string, ctx: SendContext) {
  return requestJson(LINKEDIN_LABEL, url, { method: 'GET', headers: linkedInHeaders(ctx.settings, token) }, ctx);
}

function failure(status: number, text: string, retryAfter: string | null, ctx: SendContext): ConnectionTestResult {
  const said = readErrorBody(parseJson(text));
  const verdict = verdictOf(status, said.code, said.message, retryAfter, ctx.now().getTime());
  const error = verdict.kind === 'delivered' ? { code: 'unexpected', message: `LinkedIn answered HTTP ${status}.` } : verdict.error;
  return { ok: false, message: error.message, error };
}

/** Checks the token, the member's role on the connected ad account, and the account's Conversions API rules. */
export async function testLinkedInConnection(ctx: SendContext): Promise<ConnectionTestResult> {
  const accountId = parseAdAccountId(String(ctx.connection.settings.ad_account_id ?? ''));
  if (accountId === null) {
    const error = { code: 'invalid_connection', message: 'The connection has no LinkedIn ad account id.', hint: 'Connect LinkedIn again and enter the ad account ID.' };
    return { ok: false, message: error.message, error };
  }
  const accountUrn = `${AD_ACCOUNT_URN_PREFIX}${accountId}`;
  let token: string;
  try {
    token = await ctx.accessToken();
  } catch (error) {
    // The service's own OAuth client refused: its reason names the operator's settings.
    if (error instanceof OAuthClientRefused) return error.testResult();
    const reauth = error instanceof ReauthorizationRequired;
    const e = reauth
      ? { code: 'reauthorization_required', message: 'LinkedIn refused the stored refresh token.', hint: "Connect LinkedIn again: Reconnect on the dashboard's Destinations page (or a connect_destination handoff for linkedin through the API)." }
      : { code: 'token_unavailable', message: 'No LinkedIn access token could be obtained right now.' };
    return { ok: false, message: e.message, error: e };
  }
  const base = ctx.settings.linkedin.apiBase;

  const users = await get(`${base}/rest/adAccountUsers?q=authenticatedUser`, token, ctx);
  if (!users.answered) return { ok: false, message: users.error.message, error: users.error };
  if (users.status !== 200) return failure(users.status, users.text, users.headers.get('retry-after'), ctx);
  const role = elementsOf(users.text).find((e) => e.account === accountUrn)?.role;
  if (typeof role !== 'string' || !SENDING_ROLES.has(role)) {
    const error = {
      code: 'permission_denied',
      message: role === undefined ? `The LinkedIn member has no role on ad account ${accountId}.` : `The LinkedIn member is ${String(role)} on ad account ${accountId}, which cannot send conversions.`,
      hint: 'In Campaign Manager, give the member who connected cnv the account manager, campaign manager, creative manager or billing admin role on this ad account, or connect with such a member.',
    };
    return { ok: false, message: error.message, error, refusedFields: ['ad_account_id'] };
  }

  const rules = await get(`${base}/rest/conversions?q=account&account=${encodeURIComponent(accountUrn)}`, token, ctx);
  if (!rules.answered) return { ok: false, message: rules.error.message, error: rules.error };
  if (rules.status !== 200) return failure(rules.status, rules.text, rules.headers.get('retry-after'), ctx);
  const capiRules = elementsOf(rules.text).filter((r) => r.conversionMethod === 'CONVERSIONS_API' && r.enabled !== false).length;
  const ruleText = capiRules === 1 ? '1 enabled Conversions API rule' : `${capiRules} enabled Conversions API rules`;
  return { ok: true, message: `Connected to LinkedIn ad account ${accountId} as ${role}; it has ${ruleText}.` };
}
