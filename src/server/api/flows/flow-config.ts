/**
 * The shape of a flow's trigger_config and actions_config (spec, Flow). Requests are checked by the schemas of
 * schemas.ts at the edge; publish re-checks the stored flow with these functions, which return every problem found,
 * located by its parameter path, so publish can list them all.
 */
import { TRIGGER_KEY_PATTERN, isTriggerKey } from '../../../protocol/webhook';
import { FORM_INTEGRATIONS, isFormIntegration } from '../../../protocol/collector';
import { parsePageFilter } from '../../../protocol/page-filter';
import { printable } from '../../http/errors';
import type { Problem } from '../../destinations';
import { isObject, type JsonObject } from '../../http/input';
import { FLOW_ACTIONS_MAX } from './schemas';

/** The API trigger: a signed webhook report with this key fires the flow (a signup, or a later stage: `conversion`). */
export interface ApiTrigger {
  type: 'saas_signup' | 'conversion';
  integrationId: 'api';
  key: string;
}

/** The form trigger: a form submission detected in the browser by the loader. */
export interface FormTrigger {
  integrationId: string;
  pageFilter: string;
}

/** One element of actions_config, as publish validated it. */
export interface ActionConfig {
  integrationId: string;
  config: JsonObject;
}

export { FLOW_ACTIONS_MAX } from './schemas';

/** Largest trigger_config or actions_config, serialised, in characters. */
export const FLOW_CONFIG_MAX_CHARS = 16 * 1024;

const API_TRIGGER_SHAPE = "{type: 'saas_signup' | 'conversion', integrationId: 'api', key}";
const FORM_TRIGGER_SHAPE = "{integrationId, pageFilter}";

function unknownKeys(value: JsonObject, allowed: readonly string[], param: string): Problem[] {
  return Object.keys(value)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({ param: `${param}.${key}`, message: `Unknown field ${param}.${key}; allowed: ${allowed.join(', ')}.` }));
}

function textProblem(value: unknown, param: string, max: number): Problem[] {
  if (value === undefined || value === null) return [{ param, message: `${param} is missing.` }];
  if (typeof value !== 'string' || value.trim() === '') return [{ param, message: `${param} must be a non-empty string.` }];
  if (value.length > max) return [{ param, message: `${param} must be at most ${max} characters.` }];
  return [];
}

/** Whether a trigger config is (meant as) the API trigger rather than a form trigger. */
function looksLikeApiTrigger(value: JsonObject): boolean {
  return value.type !== undefined || value.integrationId === 'api' || value.key !== undefined;
}

/** Problems of a trigger_config: it must be either the form trigger or the API trigger of the spec. */
export function triggerProblems(value: unknown, param = 'trigger_config'): Problem[] {
  if (!isObject(value)) {
    return [{ param, message: `${param} must be an object: a form trigger ${FORM_TRIGGER_SHAPE} or the API trigger ${API_TRIGGER_SHAPE}.` }];
  }
  if (looksLikeApiTrigger(value)) {
    const problems = unknownKeys(value, ['type', 'integrationId', 'key'], param);
    if (value.type !== 'saas_signup' && value.type !== 'conversion') {
      problems.push({ param: `${param}.type`, message: `${param}.type must be 'saas_signup' or 'conversion' for the API trigger ${API_TRIGGER_SHAPE}.` });
    }
    if (value.integrationId !== 'api') {
      problems.push({ param: `${param}.integrationId`, message: `${param}.integrationId must be 'api' for the API trigger ${API_TRIGGER_SHAPE}.` });
    }
    if (!isTriggerKey(value.key)) {
      problems.push({
        param: `${param}.key`,
        message: `${param}.key must be the trigger key: 1 to 64 characters from [A-Za-z0-9_-] (${TRIGGER_KEY_PATTERN.source}).`,
      });
    }
    return problems;
  }
  const problems = [
    ...unknownKeys(value, ['integrationId', 'pageFilter'], param),
    ...textProblem(value.integrationId, `${param}.integrationId`, 100),
    ...textProblem(value.pageFilter, `${param}.pageFilter`, 500),
  ];
  if (problems.length > 0) return problems;
  if (!isFormIntegration(value.integrationId)) {
    problems.push({
      param: `${param}.integrationId`,
      message: `${param}.integrationId '${printable(String(value.integrationId), 100)}' is not a form integration cnv detects; supported: ${FORM_INTEGRATIONS.join(', ')}.`,
    });
  }
  const filter = parsePageFilter(value.pageFilter);
  if (!filter.ok) problems.push({ param: `${param}.pageFilter`, message: `${param}.pageFilter: ${filter.error}` });
  return problems;
}

/** Problems of an actions_config: a non-empty array of {integrationId, config}. Destination-specific checks come at publish. */
export function actionsProblems(value: unknown, param = 'actions_config'): Problem[] {
  if (!Array.isArray(value)) return [{ param, message: `${param} must be an array of actions {integrationId, config}.` }];
  if (value.length === 0) return [{ param, message: `${param} must hold at least one action.` }];
  if (value.length > FLOW_ACTIONS_MAX) return [{ param, message: `${param} may hold at most ${FLOW_ACTIONS_MAX} actions.` }];
  return value.flatMap((action, i): Problem[] => {
    const at = `${param}[${i}]`;
    if (!isObject(action)) return [{ param: at, message: `${at} must be an object {integrationId, config}.` }];
    const problems = [...unknownKeys(action, ['integrationId', 'config'], at), ...textProblem(action.integrationId, `${at}.integrationId`, 100)];
    if (!isObject(action.config)) problems.push({ param: `${at}.config`, message: `${at}.config must be an object (the destination's settings).` });
    return problems;
  });
}

/** Problems of a config's size (kept small: flows are read on every webhook). */
export function sizeProblems(value: unknown, param: string): Problem[] {
  return JSON.stringify(value ?? null).length > FLOW_CONFIG_MAX_CHARS
    ? [{ param, message: `${param} is too large (at most ${FLOW_CONFIG_MAX_CHARS} characters of JSON).` }]
    : [];
}

/** The trigger key of an API trigger config (a signup's or a later stage's), or null. */
export function triggerKeyOf(trigger: JsonObject): string | null {
  return (trigger.type === 'saas_signup' || trigger.type === 'conversion') && typeof trigger.key === 'string' ? trigger.key : null;
}

/** What a flow's trigger fires on, as the destinations see it. */
export function eventTriggerOf(trigger: JsonObject): 'saas_signup' | 'conversion' | 'form_submission' {
  if (trigger.integrationId !== 'api') return 'form_submission';
  return trigger.type === 'conversion' ? 'conversion' : 'saas_signup';
}
