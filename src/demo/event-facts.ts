/**
 * What the demo shows of an event read through GET /v1/events. The spec guarantees only id, site_key and occurred_at
 * and says every other field may be absent or null, so each fact is read defensively here, in one place.
 */

/** An event as GET /v1/events returns it (only the guaranteed fields are typed as present). */
export interface ApiEvent {
  id: string;
  site_key: string;
  occurred_at: string | null;
  [field: string]: unknown;
}

/** One destination's result of an event. */
export interface ActionFacts {
  destination: string;
  status: string;
  /** The destination's error, when the send failed. */
  error: { code: string | null; message: string } | null;
  /** The PII-free summary of what was sent, when the service shows it. */
  request: Record<string, unknown> | null;
}

/** One destination's result of an adjustment. */
export interface AdjustmentResultFacts {
  destination: string;
  /** queued, adjusted, unsupported or failed. */
  status: string;
  reason: string | null;
}

/** A restatement or retraction of the event, with its result per destination. */
export interface AdjustmentFacts {
  adjustmentId: string;
  type: string;
  value: number | null;
  currency: string | null;
  occurredAt: string | null;
  results: AdjustmentResultFacts[];
}

/** The facts of an event the demo pages show. */
export interface EventFacts {
  id: string;
  occurredAt: string | null;
  flowName: string | null;
  trigger: string | null;
  /** saas_signup, conversion (a later stage) or form_submission. */
  triggerType: string | null;
  status: string | null;
  matchQuality: string | null;
  matchReason: string | null;
  customerEventId: string | null;
  correlationToken: string | null;
  clickIds: Record<string, string>;
  utm: Record<string, string>;
  landingPageUrl: string | null;
  touchCapturedAt: string | null;
  /** What the conversion is worth, with its currency (both or neither). */
  value: number | null;
  currency: string | null;
  customerId: string | null;
  /** Whether its person was erased (an erasure request): its ids replaced, so no user of the demo store has them. */
  erased: boolean;
  actions: ActionFacts[];
  adjustments: AdjustmentFacts[];
}

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function strings(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(record(value) ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A field read from the event itself, else from its `data` object (where the service passes extra facts through). */
function field(event: ApiEvent, name: string): unknown {
  if (event[name] !== undefined && event[name] !== null) return event[name];
  return record(event.data)?.[name];
}

function actionFacts(value: unknown): ActionFacts | null {
  const action = record(value);
  const destination = str(action?.destination);
  if (!action || !destination) return null;
  const error = record(action.error);
  const message = str(error?.message) ?? (typeof action.error === 'string' ? action.error : null);
  return {
    destination,
    status: str(action.status) ?? 'unknown',
    error: message ? { code: str(error?.code), message } : null,
    request: record(action.request),
  };
}

function adjustmentFacts(value: unknown): AdjustmentFacts | null {
  const adjustment = record(value);
  const id = str(adjustment?.adjustment_id);
  if (!adjustment || !id) return null;
  const results = (Array.isArray(adjustment.results) ? adjustment.results : []).flatMap((r): AdjustmentResultFacts[] => {
    const result = record(r);
    const destination = str(result?.destination);
    return result && destination ? [{ destination, status: str(result.status) ?? 'unknown', reason: str(result.reason) }] : [];
  });
  const amount = typeof adjustment.value === 'number' ? adjustment.value : null;
  return { adjustmentId: id, type: str(adjustment.type) ?? 'unknown', value: amount, currency: amount === null ? null : str(adjustment.currency), occurredAt: str(adjustment.occurred_at), results };
}

/** Reads the facts of an event, tolerating any field being absent or null. */
export function eventFacts(event: ApiEvent): EventFacts {
  return {
    id: event.id,
    occurredAt: str(event.occurred_at),
    flowName: str(event.flow_name),
    trigger: str(event.trigger),
    triggerType: str(event.trigger_type),
    status: str(event.status),
    matchQuality: str(field(event, 'match_quality')),
    matchReason: str(field(event, 'match_reason')),
    customerEventId: str(field(event, 'customer_event_id')),
    correlationToken: str(field(event, 'correlation_token')),
    clickIds: strings(field(event, 'click_ids')),
    utm: strings(field(event, 'utm')),
    landingPageUrl: str(field(event, 'landing_page_url')),
    touchCapturedAt: str(field(event, 'touch_captured_at')),
    ...valueFacts(event),
    customerId: str(field(event, 'customer_id')),
    erased: field(event, 'erased') === true,
    actions: (Array.isArray(event.actions) ? event.actions : []).map(actionFacts).filter((a): a is ActionFacts => a !== null),
    adjustments: (Array.isArray(event.adjustments) ? event.adjustments : []).map(adjustmentFacts).filter((a): a is AdjustmentFacts => a !== null),
  };
}

function valueFacts(event: ApiEvent): { value: number | null; currency: string | null } {
  const value = typeof event.value === 'number' && Number.isFinite(event.value) ? event.value : null;
  const currency = str(event.currency);
  return value !== null && currency ? { value, currency } : { value: null, currency: null };
}

/** Whether an event's outcome is settled: every action delivered or failed for good. */
export function isSettled(facts: EventFacts): boolean {
  return facts.status === 'completed' || facts.status === 'failed';
}
