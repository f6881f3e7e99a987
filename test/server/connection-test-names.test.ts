/**
 * A connection test names the account's flow actions whose name the platform does not have: Microsoft drops a
 * conversion whose conversion_name matches no offline conversion goal, so the test (POST /v1/destinations/{id}/test,
 * the dashboard's Test button) says which flow and which name, before a conversion is lost to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevenueService, type RevenueService } from './revenue/support';
import { DEMO } from '../../src/demo/setup';
import { testResult as testResultOfLabel } from '../../src/server/dashboard/pages/destinations';

const testResultOf = (outcome: Parameters<typeof testResultOfLabel>[0]) => String(testResultOfLabel(outcome, 'Microsoft Advertising'));

describe("a Microsoft connection test and the flows' goal names", () => {
  let r: RevenueService;
  beforeAll(async () => {
    r = await startRevenueService();
  });
  afterAll(() => r.close());

  const testMicrosoft = async () => {
    const { data } = await r.api<{ data: Array<{ id: string; type: string }> }>('GET', '/v1/destinations');
    const microsoft = data.find((d) => d.type === 'microsoft-ads')!;
    return r.api<{ ok: boolean; message: string }>('POST', `/v1/destinations/${microsoft.id}/test`, {});
  };

  it('says nothing more when every flow action names a goal', async () => {
    const result = await testMicrosoft();
    expect(result.ok).toBe(true);
    expect(result.message).toBe("Connected to Microsoft Advertising account 987654321 (customer 123456789). Offline conversion goals: 'Signup', 'Paid plan'.");
    expect(result).not.toHaveProperty('actionNames');
    expect(result).not.toHaveProperty('warning');
  });

  it('names a draft flow whose conversion_name differs from every goal (here only by its capitals)', async () => {
    await r.api('POST', '/v1/flows', {
      site_id: r.setup.site.id,
      name: 'Trial flow',
      trigger_config: { type: 'saas_signup', integrationId: 'api', key: 'trial-started' },
      actions_config: [{ integrationId: 'microsoft-ads', config: { conversion_name: 'signup' } }, ...DEMO.actions.filter((a) => a.integrationId !== 'microsoft-ads')],
    });
    const result = await testMicrosoft();
    expect(result.ok).toBe(true);
    expect(result.message).toContain("But no offline conversion goal has the name a flow action uses, so its conversions would not be accepted: flow 'Trial flow' (draft) has conversion_name 'signup'.");
    expect((result as { warning?: string }).warning).toMatch(/^But no offline conversion goal/);
    // The dashboard shows it as a warning with the way to the flows, not as a green success.
    const outcome = { destinationId: 'd', ok: true, message: result.message, warning: (result as { warning?: string }).warning };
    const shown = testResultOf(outcome);
    expect(shown).toContain('notice warn');
    expect(shown).toContain('href="/dashboard/flows"');
  });
});
