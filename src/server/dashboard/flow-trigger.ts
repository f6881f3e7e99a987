/** A flow's trigger as the dashboard tells it apart: an API trigger (its key) or a form trigger (tool and pages). */
import type { FlowRecord } from '../api/flows';

export type FlowTrigger = { kind: 'api'; key: string; type: string } | { kind: 'form'; integration: string; pageFilter: string };

/** The trigger of a flow. */
export function triggerOf(flow: Pick<FlowRecord, 'trigger_config'>): FlowTrigger {
  const t = flow.trigger_config as Record<string, unknown>;
  if (t.integrationId === 'api' || 'key' in t) return { kind: 'api', key: String(t.key ?? ''), type: String(t.type ?? 'saas_signup') };
  return { kind: 'form', integration: String(t.integrationId ?? ''), pageFilter: String(t.pageFilter ?? 'all') };
}
