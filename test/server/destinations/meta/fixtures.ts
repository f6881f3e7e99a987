/** A DeliveryInput and SendContext for the Meta tests (the shared harness, with Meta's click, cookie and dataset). */
import type { SendContext } from '../../../../src/server/destinations/destination';
import { platformInput, storedTokenContext } from '../delivery-inputs';

export { NOW } from '../delivery-inputs';

/** A signup paired with a snapshot that saw a Meta ad click. */
export const metaInput = platformInput({
  destination: 'meta', clickIds: { fbclid: 'IwAR2F4-dbP0l7Mn' }, cookies: { _fbp: 'fb.1.1596403881668.1116446470' },
  identity: { email: 'Ada@Example.com', phone: '+49 30 9876543', first_name: 'Ada', last_name: 'Lovelace' },
});

/** A SendContext against a Graph API base (the fake's url), connected by a system-user token. */
export function metaContext(
  graphApiBase: string,
  options: { pixelId?: string; token?: string; now?: Date; timeoutMs?: number; testEventCode?: string; settings?: Record<string, unknown> } = {},
): SendContext {
  const settings = { pixel_id: options.pixelId ?? '1234567890123456', ...(options.testEventCode ? { test_event_code: options.testEventCode } : {}), ...options.settings };
  return storedTokenContext({ id: 'dst_meta', settings, token: options.token ?? 'EAAfake0cnv0demo0token0000000000' }, { CNV_META_GRAPH_API_BASE: graphApiBase }, options);
}
