/** The demo's lines of the start banner: where to click, and where the conversions go. */
import type { RunningDemo } from './index';
import { fakeUrls } from './index';
import { DEMO } from './setup';
import { adClickHref } from './pages/landing';
import { newDemoClickIds } from './site';
import { platformLabel } from './journey';

/** Lines to print after the service's banner. */
export function demoBannerLines(demo: Pick<RunningDemo, 'url' | 'setup' | 'fakes'>): string[] {
  const platforms = DEMO.actions.map((a) => platformLabel(a.integrationId)).join(', ');
  return [
    'Demo: a pretend customer site with the loader installed, on its own origin. Watch a click become a conversion:',
    '',
    `  open    ${demo.url}${adClickHref(newDemoClickIds())}`,
    '          (an "ad click": the landing URL carries a gclid, fbclid, msclkid, li_fat_id, rdt_cid and ttclid), then Pricing, then sign up;',
    '          the welcome page then offers "Upgrade to paid" (a later stage with its value) and "Refund" (an adjustment)',
    `  events  ${demo.url}/events`,
    '',
    `  The demo has its own account, "${DEMO.accountName}" (its key is in the data directory, demo-store.json), so the key above`,
    `  never sees or changes it. Site "${demo.setup.site.name}" (${demo.setup.site.site_key}), flow "${DEMO.flowName}":`,
    `  API trigger ${DEMO.triggerKey} -> ${platforms};`,
    `  flow "${DEMO.stageFlowName}": conversion trigger ${DEMO.stageTriggerKey} (${DEMO.paidPlan.value} ${DEMO.paidPlan.currency}) -> the same six.`,
    `  While the demo runs, every ad platform call of this service (sign-in included) goes to local fakes:`,
    `  ${fakeUrls(demo.fakes)}. CNV_DEMO_PORT=off turns the demo off.`,
    '',
  ];
}
