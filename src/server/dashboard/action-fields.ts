/** The one setting the dashboard asks for per destination type, and how it becomes a flow action's `config`. */

export interface ActionField {
  platformLabel: string;
  label: string;
  /** Where in the action's config the value goes (`conversion.id`): the API's problems name it so. */
  param: string;
  hint: string;
  /** The action config for a value typed in (empty: the platform's defaults). */
  config(value: string): Record<string, unknown>;
  /** The value shown for a stored config. */
  read(config: Record<string, unknown>): string;
}

const FIELDS: Record<string, ActionField> = {
  'google-ads': {
    platformLabel: 'Google Ads',
    label: 'Conversion action id',
    param: 'conversion.id',
    hint: 'Numeric id of the conversion action to fire.',
    config: (value) => ({ conversion: { id: value } }),
    read: (config) => String((config.conversion as { id?: unknown } | undefined)?.id ?? ''),
  },
  meta: {
    platformLabel: 'Meta',
    label: 'Event name',
    param: 'event_name',
    hint: 'Optional: CompleteRegistration for signups, Lead for forms by default.',
    config: (value) => (value ? { event_name: value } : {}),
    read: (config) => String(config.event_name ?? ''),
  },
  'microsoft-ads': {
    platformLabel: 'Microsoft Advertising',
    label: 'Conversion goal name',
    param: 'conversion_name',
    hint: 'The offline conversion goal, spelled exactly as in Microsoft Advertising.',
    config: (value) => ({ conversion_name: value }),
    read: (config) => String(config.conversion_name ?? ''),
  },
  linkedin: {
    platformLabel: 'LinkedIn',
    label: 'Conversion rule id',
    param: 'conversion_rule',
    hint: 'Digits, from Campaign Manager > Conversion tracking.',
    config: (value) => ({ conversion_rule: value }),
    read: (config) => String(config.conversion_rule ?? ''),
  },
  reddit: {
    platformLabel: 'Reddit',
    label: 'Event',
    param: 'event_name',
    hint: 'Optional: SIGN_UP for signups, LEAD for forms by default; PURCHASE or another tracking type, or a custom name.',
    config: (value) => (value ? { event_name: value } : {}),
    read: (config) => String(config.event_name ?? ''),
  },
  tiktok: {
    platformLabel: 'TikTok',
    label: 'Event',
    param: 'event_name',
    hint: 'Optional: CompleteRegistration for signups, Lead for forms by default; Purchase, Subscribe, or a custom name.',
    config: (value) => (value ? { event_name: value } : {}),
    read: (config) => String(config.event_name ?? ''),
  },
};

/** The field of a destination type (a generic conversion id for a type without its own). */
export function actionFieldOf(type: string): ActionField {
  return (
    FIELDS[type] ?? {
      platformLabel: type,
      label: 'Conversion id',
      param: 'conversion.id',
      hint: '',
      config: (value) => ({ conversion: { id: value } }),
      read: (config) => String((config.conversion as { id?: unknown } | undefined)?.id ?? ''),
    }
  );
}
