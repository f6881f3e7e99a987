/** window.__service: the loader's only global, shared with the page's stub and tag manager. */
import type { SERVICE_GLOBAL } from '../protocol/install';
import type { QueuedCall } from './queue';

/** The shape of window.__service: siteKey and q may be set by the page before the loader; the rest the loader adds. */
export interface Service {
  /** Site key, for installs whose script tag cannot carry one. */
  siteKey?: string;
  /** Calls queued before the loader arrived; after it, pushes run at once. */
  q?: QueuedCall[];
  /** Resolves once the loader has decided whether it is active on this page (true) or not (false). */
  ready?: Promise<boolean>;
  /** Signup intent without a form submit: writes the correlation cookie and sends a snapshot; the token, or null. */
  captureSaasSignupIntent?(): Promise<string | null>;
  /** The visitor's consent choice: true starts the loader, anything else stops it and deletes its cookies. */
  consent?(granted: boolean): void;
}

/**
 * The window, typed with the one global the protocol names: `.__service` below compiles only while SERVICE_GLOBAL is
 * that name (a constant here would cost bytes on every page: esbuild does not inline strings).
 */
type ServiceWindow = { [K in typeof SERVICE_GLOBAL]?: unknown };

/** The window.__service the page set (its siteKey and q, or a first loader's methods and mark), or a new object if it set none. */
export const pageService = (): Service => {
  const service = (window as ServiceWindow).__service;
  return (typeof service === 'object' && (service as Service)) || {};
};

/** Adds the loader's methods to the page's window.__service object (keeping its siteKey and q) and makes it the global. */
export const publishService = (
  page: Service,
  api: Required<Pick<Service, 'captureSaasSignupIntent' | 'consent'>>,
): Service => {
  return ((window as ServiceWindow).__service = Object.assign(page, api));
};
