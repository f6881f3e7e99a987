/**
 * Flows that would send one conversion twice to where a platform counts it twice. Every live flow whose trigger fires
 * on a conversion makes an event of its own (several flows sharing one key is intended: one per platform, say), and
 * most platforms deduplicate those events on the reporter's id. Google does not: its transaction id is per cnv event
 * and action, so two flows firing on one signup and both sending it to one conversion action upload it twice.
 */
import { pageFiltersOverlap } from '../../../protocol/page-filter';
import { platformFor } from '../../destinations';
import type { JsonObject } from '../../http/input';
import { eventTriggerOf, triggerKeyOf } from './flow-config';

/** The parts of a flow (a stored row or its API record) the overlap looks at. */
export interface OverlapFlow {
  id: string;
  name: string;
  site_id: string;
  status: 'draft' | 'live';
  trigger_config: Record<string, unknown>;
  actions_config: ReadonlyArray<Record<string, unknown>>;
}

/** Another live flow that sends the same conversions to the same place of a platform that counts each event. */
export interface FlowOverlap {
  flowId: string;
  flowName: string;
  /** The destination type, e.g. `google-ads`. */
  integrationId: string;
  /** The platform's name for people, e.g. `Google Ads`. */
  platformLabel: string;
  /** Where it counts (Google: the conversion action id). */
  target: string;
}

/** Whether two flows' triggers fire on the same conversion: one site, and the same API key and kind, or one form tool on pages in common. */
function triggersOverlap(a: OverlapFlow, b: OverlapFlow): boolean {
  if (a.site_id !== b.site_id) return false;
  const kind = eventTriggerOf(a.trigger_config as JsonObject);
  if (kind !== eventTriggerOf(b.trigger_config as JsonObject)) return false;
  if (kind !== 'form_submission') {
    const key = triggerKeyOf(a.trigger_config as JsonObject);
    return key !== null && key === triggerKeyOf(b.trigger_config as JsonObject);
  }
  const tool = a.trigger_config.integrationId;
  return typeof tool === 'string' && tool === b.trigger_config.integrationId &&
    pageFiltersOverlap(String(a.trigger_config.pageFilter ?? ''), String(b.trigger_config.pageFilter ?? ''));
}

/** A place where a platform counts every event: the platform and its target. */
type CountedTarget = Omit<FlowOverlap, 'flowId' | 'flowName'>;

/** Where each of a flow's actions counts every event, as `type target` keys (platforms that deduplicate left out). */
function countedTargets(flow: OverlapFlow): Map<string, CountedTarget> {
  const targets = new Map<string, CountedTarget>();
  for (const action of flow.actions_config) {
    const type = action.integrationId;
    const platform = typeof type === 'string' ? platformFor(type) : undefined;
    const config = action.config;
    if (!platform?.countsEachEventIn || typeof config !== 'object' || config === null || Array.isArray(config)) continue;
    const target = platform.countsEachEventIn(config as Record<string, unknown>);
    if (target !== null) targets.set(`${platform.type} ${target}`, { integrationId: platform.type, platformLabel: platform.label, target });
  }
  return targets;
}

/**
 * The live flows among `others` that fire on the same conversions as `flow` and send them to a place where `flow`
 * sends them too and which counts each event (`flow` itself may be a draft: what publishing it would do).
 */
export function flowOverlaps(flow: OverlapFlow, others: readonly OverlapFlow[]): FlowOverlap[] {
  const mine = countedTargets(flow);
  if (mine.size === 0) return [];
  const overlaps: FlowOverlap[] = [];
  for (const other of others) {
    if (other.id === flow.id || other.status !== 'live' || !triggersOverlap(flow, other)) continue;
    for (const [key, theirs] of countedTargets(other)) {
      if (mine.has(key)) overlaps.push({ flowId: other.id, flowName: other.name, ...theirs });
    }
  }
  return overlaps;
}

const COUNT_WORDS = ['', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

/**
 * The overlaps of one flow at one place in words, for the API's warnings (one other flow, with its id) and the
 * dashboard's cards (every other flow sending there, by name, beside links to them).
 */
export function overlapMessage(overlaps: readonly FlowOverlap[], live: boolean, named: 'with id' | 'by name' = 'with id'): string {
  const [first] = overlaps;
  if (!first) return '';
  const names = overlaps.map((o) => (named === 'with id' ? `'${o.flowName}' (${o.flowId})` : `'${o.flowName}'`));
  const listed = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
  const flows = names.length + 1;
  const verb = `${live ? '' : 'would '}${flows === 2 ? 'both' : 'all'} send`;
  return (
    `${live ? 'This flow and' : 'Once published, this flow and'} the live flow${names.length === 1 ? '' : 's'} ${listed} ${verb} each ` +
    `conversion to ${first.platformLabel} conversion action ${first.target}, as ${COUNT_WORDS[flows] ?? flows} conversions: the ` +
    `action counts each unless it counts one conversion per click. Send ${flows === 2 ? 'one flow' : 'all but one'} to another ` +
    `conversion action, or unpublish ${flows === 2 ? 'one' : 'the others'}.`
  );
}
