/** The public face of this folder: what other parts of the service may import. */
export * from './report-sql';
export * from './secret-sql';
export { SIGNATURE_SCHEME_DESCRIPTION } from './schemas';
export { sealWebhookSecretsAtStart, type WebhookSecretsAtStart } from './secret-upgrade';
