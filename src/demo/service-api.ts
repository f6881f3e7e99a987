/** The few REST calls the demo makes to cnv, over HTTP with its API key, exactly as a customer's backend would. */
import type { ListEnvelope } from '../server/http/pagination';
import type { ApiEvent } from './event-facts';

/** A REST call that did not succeed: the service's error envelope, kept whole for the log. */
export class ServiceApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: string,
  ) {
    let detail = body.slice(0, 300);
    try {
      const parsed = JSON.parse(body) as { error?: { code?: string; message?: string } };
      if (parsed.error?.message) detail = `${parsed.error.code ?? 'error'}: ${parsed.error.message}`;
    } catch {
      // not JSON: keep the start of the text
    }
    super(`${method} ${path} answered ${status}: ${detail}`);
    this.name = 'ServiceApiError';
  }
}

export type { ListEnvelope } from '../server/http/pagination';
export type { SiteRecord } from '../server/api/sites/sites';

export interface FlowRecord {
  id: string;
  site_id: string;
  name: string;
  status: string;
  trigger_config: Record<string, unknown>;
  actions_config: Array<Record<string, unknown>>;
}

export interface HandoffRecord {
  id: string;
  url: string;
  status: string;
}

/** A REST client bound to one base URL (reachable from this process) and one API key. */
export class ServiceApi {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly timeoutMs = 10_000,
  ) {}

  /** One call; resolves to the parsed JSON answer, throws ServiceApiError on any non-2xx. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    if (!res.ok) throw new ServiceApiError(method, path, res.status, text);
    return JSON.parse(text) as T;
  }

  /** Every item of a list endpoint (other than events), walking next_cursor. */
  async listAll<T>(path: string, query: Record<string, string> = {}): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    for (;;) {
      const params = new URLSearchParams({ ...query, limit: '1000', ...(cursor ? { starting_after: cursor } : {}) });
      const page: ListEnvelope<T> = await this.call('GET', `${path}?${params}`);
      items.push(...page.data);
      if (!page.has_more || !page.next_cursor) return items;
      cursor = page.next_cursor;
    }
  }

  /** Whether the key is accepted (false on 401; other faults throw). */
  async keyWorks(): Promise<boolean> {
    try {
      await this.call('GET', '/v1/sites?limit=1');
      return true;
    } catch (error) {
      if (error instanceof ServiceApiError && error.status === 401) return false;
      throw error;
    }
  }

  /** One page of GET /v1/events, newest first. */
  async events(query: Record<string, string>): Promise<ListEnvelope<ApiEvent>> {
    return this.call('GET', `/v1/events?${new URLSearchParams(query)}`);
  }
}
