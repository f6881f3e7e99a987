/** A DeliveryInput and SendContext for the TikTok tests (the shared harness, with TikTok's click, cookie and pixel). */
import type { SendContext } from '../../../../src/server/destinations/destination';
import { FAKE_TIKTOK_PIXEL, FAKE_TIKTOK_TOKEN } from '../../../../src/demo/fakes/tiktok';
import { platformInput, storedTokenContext } from '../delivery-inputs';

export { NOW } from '../delivery-inputs';

/** A signup paired with a snapshot that saw a TikTok ad click. */
export const tiktokInput = platformInput({
  destination: 'tiktok', clickIds: { ttclid: 'E.C.P.CqgBmvzXbC1kKPt8L0' }, cookies: { _ttp: '2F7h37YkS1j57AYSKTI7IHhJPYH' },
  identity: { email: ' Ada@Example.com ', phone: '+49 30 9876543', first_name: 'Ada', last_name: 'Lovelace' },
});

/** A SendContext against a TikTok API base (the fake's url), connected by an Events API access token. */
export function tiktokContext(
  apiBase: string,
  options: { pixelCode?: string; token?: string; testEventCode?: string; timeoutMs?: number; settings?: Record<string, unknown> } = {},
): SendContext {
  const settings = { pixel_code: options.pixelCode ?? FAKE_TIKTOK_PIXEL, ...(options.testEventCode ? { test_event_code: options.testEventCode } : {}), ...options.settings };
  return storedTokenContext({ id: 'dst_tiktok', settings, token: options.token ?? FAKE_TIKTOK_TOKEN }, { CNV_TIKTOK_API_BASE: apiBase }, options);
}
