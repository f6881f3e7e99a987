/**
 * Sends one batch to LinkedIn: events that can never be sent fail before any call; the rest go in one BATCH_CREATE
 * call per conversion rule (so a rule LinkedIn refuses only fails its own events), each element's status is read back
 * to its event, and a call refused whole (400/422) is split in halves until the refused event stands alone.
 */
import { type DeliveryError, type DeliveryInput, type DeliveryOutcome, type RequestSummary, type SendContext } from '../destination';
import { parseJson, requestJson } from '../http';
import { batchCreateHeaders, buildConversionEvent, CONVERSION_EVENTS_PATH, LINKEDIN_LABEL, type ConversionEventElement } from './request';
import { readElementResults, readErrorBody, verdictOf, type Verdict } from './response';

/** Calls one batch may make while isolating refused events; past it, the unresolved events are retried later. */
const ISOLATION_BUDGET = 64;

interface Item {
  index: number;
  element: ConversionEventElement;
  summary: RequestSummary;
}

/**
 * The outcome of one event. LinkedIn's words were cleaned when read (response.ts); the names and other values sent are
 * removed from the message for every platform alike (platform-text.ts, applied by the registry).
 */
function outcomeOf(verdict: Verdict, item: Item): DeliveryOutcome {
  switch (verdict.kind) {
    case 'delivered':
      return verdict.duplicate ? { kind: 'delivered', request: item.summary, duplicate: true } : { kind: 'delivered', request: item.summary };
    case 'retry':
      return { kind: 'retry', error: verdict.error, request: item.summary, ...(verdict.afterMs === undefined ? {} : { afterMs: verdict.afterMs }) };
    case 'failed':
      return { kind: 'failed', error: verdict.error, request: item.summary };
    case 'token_refused':
      return { kind: 'token_refused', error: verdict.error, request: item.summary };
  }
}

/** Sends a batch of LinkedIn conversion events; one outcome per input, in order. Never throws for a LinkedIn answer. */
export async function sendLinkedInBatch(inputs: readonly DeliveryInput[], ctx: SendContext): Promise<DeliveryOutcome[]> {
  const now = ctx.now();
  const outcomes: DeliveryOutcome[] = new Array(inputs.length);
  const groups = new Map<string, Item[]>();
  inputs.forEach((input, index) => {
    const built = buildConversionEvent(input, now);
    if (!built.ok) {
      outcomes[index] = built.skipped ? { kind: 'skipped', reason: built.error, request: built.summary } : { kind: 'failed', error: built.error, request: built.summary };
      return;
    }
    const group = groups.get(built.element.conversion) ?? [];
    group.push({ index, element: built.element, summary: built.summary });
    groups.set(built.element.conversion, group);
  });
  if (groups.size === 0) return outcomes;

  // A refused refresh token throws ReauthorizationRequired: delivery makes the conversions wait (destination.ts).
  const token = await ctx.accessToken();

  const url = `${ctx.settings.linkedin.apiBase}${CONVERSION_EVENTS_PATH}`;
  let budget = ISOLATION_BUDGET;

  const send = async (items: Item[]): Promise<void> => {
    budget -= 1;
    const answer = await requestJson(
      LINKEDIN_LABEL,
      url,
      { method: 'POST', headers: batchCreateHeaders(ctx.settings, token), body: { elements: items.map((i) => i.element) } },
      ctx,
    );
    if (!answer.answered) {
      for (const item of items) outcomes[item.index] = outcomeOf({ kind: 'retry', error: answer.error }, item);
      return;
    }
    const nowMs = ctx.now().getTime();
    if (answer.status >= 200 && answer.status < 300) {
      const results = readElementResults(answer.text, items.length);
      if (results === null) {
        // LinkedIn may have recorded them; sending again is safe because it deduplicates on eventId.
        const error = { code: 'invalid_response', message: 'LinkedIn answered 2xx without one status per event.', status: answer.status };
        for (const item of items) outcomes[item.index] = outcomeOf({ kind: 'retry', error }, item);
        return;
      }
      items.forEach((item, i) => {
        const r = results[i]!;
        outcomes[item.index] = outcomeOf(verdictOf(r.status, r.code, r.message, null, nowMs), item);
      });
      return;
    }
    const said = readErrorBody(parseJson(answer.text));
    const verdict = verdictOf(answer.status, said.code, said.message, answer.headers.get('retry-after'), nowMs);
    const refusedWhole = (answer.status === 400 || answer.status === 422) && verdict.kind === 'failed' && verdict.error.code !== 'invalid_conversion_rule';
    if (refusedWhole && items.length > 1) {
      if (budget < 2) {
        const error = { code: 'isolation_pending', message: 'LinkedIn refused a batch with this event in it; it is sent again in a smaller batch.', status: answer.status };
        for (const item of items) outcomes[item.index] = outcomeOf({ kind: 'retry', error }, item);
        return;
      }
      const half = Math.ceil(items.length / 2);
      await send(items.slice(0, half));
      await send(items.slice(half));
      return;
    }
    for (const item of items) outcomes[item.index] = outcomeOf(verdict, item);
  };

  for (const group of groups.values()) await send(group);
  return outcomes;
}
