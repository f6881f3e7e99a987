/**
 * The commands that seal or hash with the service's secret key (`webhook-secret rotate`, `erase`) must use the key the
 * service runs with. On PostgreSQL, a cnv run without CNV_SECRET_KEY falls back to the `secret.key` of its own
 * CNV_DATA_DIR and, finding none, would make a new key there: the webhook secret it then prints would never verify at
 * the service (401 no_signature_match), and an erasure's keyed hashes would not be recognised by it. Refused instead.
 */
import { existsSync } from 'node:fs';
import type { Settings } from '../server/settings';
import { secretKeyFile } from '../server/db/secret-box';

/** Why this command cannot use the service's key with these settings, or null when it can. */
export function secretKeyProblem(settings: Pick<Settings, 'databaseUrl' | 'secretKey' | 'dataDir'>, command: string): string | null {
  if (!settings.databaseUrl || settings.secretKey) return null;
  const keyFile = secretKeyFile(settings.dataDir);
  if (existsSync(keyFile)) return null;
  return (
    `CNV_SECRET_KEY is not set, and ${keyFile} does not exist: 'cnv ${command}' needs the key the service runs with ` +
    '(it seals webhook secrets and hashes erasures with it). Set CNV_SECRET_KEY to the same value as the service\'s, ' +
    'or CNV_DATA_DIR to the directory whose secret.key the service uses. Nothing was changed.'
  );
}
