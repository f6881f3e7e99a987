import { describe, expect, it } from 'vitest';
import { metaPlatform } from '../../../../src/server/destinations/meta';

const PARAM = 'actions_config[0].config';

describe('checking a Meta action config', () => {
  it('accepts no config: the trigger picks the event', () => {
    expect(metaPlatform.checkAction({}, PARAM, 'saas_signup')).toEqual([]);
  });

  it('accepts standard and custom event names', () => {
    expect(metaPlatform.checkAction({ event_name: 'Lead' }, PARAM, 'form_submission')).toEqual([]);
    expect(metaPlatform.checkAction({ event_name: 'TrialActivated' }, PARAM, 'saas_signup')).toEqual([]);
  });

  it('refuses an unknown key politely, with its path', () => {
    expect(metaPlatform.checkAction({ conversion: { id: '1' } }, PARAM, 'saas_signup')).toEqual([
      { param: `${PARAM}.conversion`, message: expect.stringContaining('only one is event_name') },
    ]);
  });

  it('refuses a name that is not a string, empty, padded or longer than 50 characters', () => {
    for (const event_name of [42, '', ' Lead', 'x'.repeat(51)]) {
      const problems = metaPlatform.checkAction({ event_name }, PARAM, 'saas_signup');
      expect(problems).toHaveLength(1);
      expect(problems[0]?.param).toBe(`${PARAM}.event_name`);
    }
    expect(metaPlatform.checkAction({ event_name: 'x'.repeat(50) }, PARAM, 'saas_signup')).toEqual([]);
  });

  it('refuses Purchase for a form trigger (Meta only takes it with a currency and a value); a webhook report can carry one', () => {
    expect(metaPlatform.checkAction({ event_name: 'Purchase' }, PARAM, 'form_submission')[0]?.message).toMatch(/currency and a value/);
    expect(metaPlatform.checkAction({ event_name: 'Purchase' }, PARAM, 'saas_signup')).toEqual([]);
  });

  it('points out a standard name in the wrong case', () => {
    expect(metaPlatform.checkAction({ event_name: 'completeregistration' }, PARAM, 'saas_signup')[0]?.message).toMatch(
      /write 'CompleteRegistration'/,
    );
  });
});

describe('the Meta connect form', () => {
  const token = 'EAAB' + 'a'.repeat(40);

  it('connects without OAuth: the token becomes a credential, the dataset id a setting', () => {
    expect(metaPlatform.oauth).toBeNull();
    expect(metaPlatform.fields.find((f) => f.name === 'access_token')?.secret).toBe(true);
    expect(metaPlatform.parseConnectForm({ pixel_id: ' 1234567890123456 ', access_token: token })).toEqual({
      ok: true,
      settings: { pixel_id: '1234567890123456' },
      credentials: { access_token: token },
      summary: 'Meta dataset 1234567890123456',
    });
  });

  it('keeps an optional test event code as a setting', () => {
    const result = metaPlatform.parseConnectForm({ pixel_id: '1234567890123456', access_token: token, test_event_code: 'TEST4242' });
    expect(result.ok && result.settings).toEqual({ pixel_id: '1234567890123456', test_event_code: 'TEST4242' });
  });

  it('names each wrong field and never echoes the token', () => {
    const result = metaPlatform.parseConnectForm({ pixel_id: 'act_123', access_token: 'short token' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.param)).toEqual(['pixel_id', 'access_token']);
    expect(JSON.stringify(result)).not.toContain('short token');
  });

  it('takes batches as large as Meta allows', () => {
    expect(metaPlatform.maxBatchSize).toBe(1000);
  });
});
