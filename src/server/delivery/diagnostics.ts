/**
 * After delivery: platforms that process an upload after accepting it (Google's Data Manager API) are asked what became
 * of it, and the answer is stored on every action the upload carried (`request.diagnostics`), so the events API and
 * the dashboard show it. A request still processing is asked again later; after a day the question is dropped.
 */
import type { Database } from '../db/db';
import type { SecretBox } from '../db/secret-box';
import type { Settings } from '../settings';
import { AccessTokens, findConnectionsById, platformFor, sendContextFor, supportedDestinationTypes, toConnection } from '../destinations';
import { dueDiagnostics, recordDiagnostics } from './sql';

/** Ask a request still processing (or whose diagnostics failed) again this long after the last check. */
export const DIAGNOSTICS_RECHECK_MS = 60 * 60_000;
/** Give up on a request's diagnostics this long after its delivery. */
export const DIAGNOSTICS_GIVE_UP_MS = 24 * 60 * 60_000;
/** Requests looked at per round. */
const ROUND_LIMIT = 50;

export interface DiagnosticsDeps {
  db: Database;
  settings: Settings;
  box: SecretBox;
  tokens: AccessTokens;
  now(): Date;
  signal: AbortSignal;
  timeoutMs: number;
}

/** Asks the platforms about the delivered requests whose diagnostics are due; returns how many requests were asked. */
export async function checkDiagnostics(deps: DiagnosticsDeps): Promise<number> {
  const platforms = supportedDestinationTypes().map(platformFor).filter((p) => p?.diagnose);
  const now = deps.now();
  const firstAfter = Math.min(...platforms.map((p) => p!.diagnoseAfterMs ?? 0));
  const due = await dueDiagnostics(deps.db, platforms.map((p) => p!.type), now, Number.isFinite(firstAfter) ? firstAfter : 0, ROUND_LIMIT);
  // One question per request id: a batch's actions share it.
  const byRequest = new Map<string, typeof due>();
  for (const row of due) byRequest.set(row.platform_request_id, [...(byRequest.get(row.platform_request_id) ?? []), row]);
  const connections = await findConnectionsById(deps.db, [...new Set(due.map((r) => r.destination_id))]);
  for (const [requestId, rows] of byRequest) {
    const first = rows[0]!;
    const platform = platformFor(first.destination);
    const row = connections.get(first.destination_id);
    if (!platform?.diagnose || !row) continue;
    const checkedAt = deps.now();
    const expired = checkedAt.getTime() - first.delivered_at.getTime() >= DIAGNOSTICS_GIVE_UP_MS;
    const nextCheckAt = new Date(checkedAt.getTime() + DIAGNOSTICS_RECHECK_MS).toISOString();
    let diagnostics: Record<string, unknown>;
    try {
      // Credentials sealed under another key throw here, for this connection only: asked again later like any fault.
      const ctx = sendContextFor(platform, toConnection(row, deps.box), deps);
      const result = await platform.diagnose(requestId, ctx);
      diagnostics = result.ok
        ? { final: result.final || expired, state: result.state, message: result.message, ...result.details, checked_at: checkedAt.toISOString(), ...(result.final || expired ? {} : { next_check_at: nextCheckAt }) }
        : { final: expired, state: 'unavailable', message: result.error.message, checked_at: checkedAt.toISOString(), ...(expired ? {} : { next_check_at: nextCheckAt }) };
    } catch (error) {
      // No token (reauthorization required) or a transient fault: ask again later.
      diagnostics = { final: expired, state: 'unavailable', message: (error as Error).message, checked_at: checkedAt.toISOString(), ...(expired ? {} : { next_check_at: nextCheckAt }) };
    }
    await recordDiagnostics(deps.db, rows.map((r) => r.action_id), diagnostics);
  }
  return byRequest.size;
}
