/**
 * Destination kinds the service can connect through a handoff: what the hosted consent form collects, how it is
 * checked, and what an action of a flow needs before it can go live. A kind is offered only when delivery has an
 * adapter for it too.
 */
import { adapterFor } from './adapters';
import type { JsonObject } from '../http/input';
import { googleAdsDestination } from './google-ads/connect';

/** One input of a hosted connect form. */
export interface ConnectField {
  name: string;
  label: string;
  hint: string;
  required: boolean;
  placeholder?: string;
  /** Rendered as a password input and never echoed back into the page. */
  secret?: boolean;
}

/** A problem found in a flow, located by its parameter path. */
export interface Problem {
  param: string;
  message: string;
}

export type ConnectResult = { ok: true; settings: Record<string, unknown>; summary: string } | { ok: false; errors: Problem[] };

export interface DestinationKind {
  type: string;
  /** Human name, e.g. `Google Ads`. */
  label: string;
  /** What connecting does, in a sentence for the consent screen. */
  consent: string;
  fields: readonly ConnectField[];
  /** Checks the submitted form and builds the settings stored on the destination. */
  parseConnectForm(form: Record<string, string>): ConnectResult;
  /** Problems of one action's `config` for this destination, given the connected destination's settings. */
  checkAction(config: JsonObject, param: string, settings: Record<string, unknown>): Problem[];
}

const KINDS: readonly DestinationKind[] = [googleAdsDestination];

/** The kind for a destination type, or null when it cannot be connected. */
export function destinationKind(type: string): DestinationKind | null {
  const kind = KINDS.find((k) => k.type === type);
  return kind && adapterFor(kind.type) ? kind : null;
}

/** The destination types that can be connected (and delivered to). */
export function supportedDestinationTypes(): string[] {
  return KINDS.filter((k) => adapterFor(k.type)).map((k) => k.type);
}
