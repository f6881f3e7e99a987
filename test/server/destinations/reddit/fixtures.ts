/** A DeliveryInput and SendContext for the Reddit tests (the shared harness, with Reddit's click, cookie and pixel). */
import type { SendContext } from '../../../../src/server/destinations/destination';
import { FAKE_REDDIT_PIXEL, FAKE_REDDIT_TOKEN } from '../../../../src/demo/fakes/reddit';
import { platformInput, storedTokenContext } from '../delivery-inputs';

export { NOW } from '../delivery-inputs';

/** A signup paired with a snapshot that saw a Reddit ad click; the email is the example of Reddit's documents. */
export const redditInput = platformInput({
  destination: 'reddit', clickIds: { rdt_cid: '3184742045291813272' }, cookies: { _rdt_uuid: '1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132' },
  identity: { email: 'Al.ice$+Apple@Example.Com', phone: '+1 (555) 444-1234', first_name: 'Alice', last_name: 'Liddell' },
});

/** A SendContext against a Reddit API base (the fake's url), connected by a conversion access token. */
export function redditContext(apiBase: string, options: { pixelId?: string; token?: string; testId?: string; timeoutMs?: number } = {}): SendContext {
  const settings = { pixel_id: options.pixelId ?? FAKE_REDDIT_PIXEL, ...(options.testId ? { test_id: options.testId } : {}) };
  return storedTokenContext({ id: 'dst_reddit', settings, token: options.token ?? FAKE_REDDIT_TOKEN }, { CNV_REDDIT_API_BASE: apiBase }, options);
}
