/** The demo's lines of the start banner: where to click, and where the conversions go. */
import type { RunningDemo } from './index';
import { DEMO } from './setup';
import { adClickHref } from './pages/landing';
import { newDemoClickId } from './site';

/** Lines to print after the service's banner. */
export function demoBannerLines(demo: Pick<RunningDemo, 'url' | 'setup' | 'fake'>): string[] {
  return [
    'Demo: a pretend customer site with the loader installed, on its own origin. Watch a click become a conversion:',
    '',
    `  open    ${demo.url}${adClickHref(newDemoClickId())}`,
    '          (an "ad click": the landing URL carries a gclid), then Pricing, then sign up',
    `  events  ${demo.url}/events`,
    '',
    `  Site "${demo.setup.site.name}" (${demo.setup.site.site_key}), flow "${DEMO.flowName}": API trigger ${DEMO.triggerKey} -> Google Ads conversion ${DEMO.conversionActionId}.`,
    `  Google Ads uploads go to a local fake of its API (${demo.fake.url}) while the demo runs; CNV_DEMO_PORT=off turns the demo off.`,
    '',
  ];
}
