/** Names people read on the dashboard for the slugs the API uses: form tools, triggers. */
import type { FormIntegration } from '../../protocol/forms';

/** Each form tool by its product name. */
export const FORM_TOOL_LABELS: Readonly<Record<FormIntegration, string>> = {
  'gravity-forms': 'Gravity Forms',
  hubspot: 'HubSpot Forms',
  'contact-form-7': 'Contact Form 7',
  wpforms: 'WPForms',
  elementor: 'Elementor Forms',
  webflow: 'Webflow Forms',
  typeform: 'Typeform',
  calendly: 'Calendly',
  html: 'Any HTML form (data-service-form)',
};

/** A form tool's name (the slug itself for one this list does not know yet). */
export function formToolLabel(integration: string): string {
  return (FORM_TOOL_LABELS as Record<string, string>)[integration] ?? integration;
}

/** An event's trigger in words. */
export function triggerLabel(trigger: string | null | undefined): string {
  if (trigger === 'api' || trigger === 'saas_signup') return 'Signup from your backend';
  if (trigger === 'form_submission') return 'Form submission';
  if (trigger === 'conversion') return 'Conversion from your backend';
  return trigger ?? '';
}

/** An email as the events list shows it: the first letter of the local part, the domain whole (a***@example.com). */
export function maskedEmail(email: string | null | undefined): string | null {
  if (!email) return null;
  const at = email.lastIndexOf('@');
  if (at < 1) return `${email.slice(0, 1)}***`;
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}
