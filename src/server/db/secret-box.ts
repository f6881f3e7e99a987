/**
 * Encryption of stored credentials (refresh tokens, access tokens a user pastes, developer tokens, webhook secrets): AES-256-GCM with a
 * random 96-bit nonce per value. The key is CNV_SECRET_KEY (32 bytes, base64 or hex), or on first use a random key
 * written once to `<data dir>/secret.key` with mode 600. A value sealed under one key never opens under another.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Queryable } from './db';

const VERSION = 'v1';

/**
 * Whether a stored value has the form of a sealed one (`v1.` and three parts): what tells a value sealed by this box
 * from one stored in clear by an older version (a webhook secret starts `whsec_`). Whether it opens is another matter.
 */
export function looksSealed(value: string): boolean {
  return value.startsWith(`${VERSION}.`) && value.split('.').length === 4;
}

/** The plain text of a sealed value, or null when it does not open with `box` (sealed under another key, or altered). */
export function openedOrNull(box: Pick<SecretBox, 'open'>, sealed: string): string | null {
  try {
    return box.open(sealed);
  } catch {
    return null;
  }
}

/**
 * Seals, once, the values of `table.column` that an earlier version stored in clear (migrations are SQL and have no
 * key, so the start does it): each by a guarded update (only while the stored value is still that clear one), so two
 * processes starting at once on one PostgreSQL never seal a value twice, and a later start finds nothing to do.
 * Returns how many it sealed.
 */
export async function sealValuesStoredInClear(
  db: Queryable,
  box: SecretBox,
  table: 'handoffs' | 'trigger_sources',
  column: 'token' | 'secret' | 'previous_secret',
): Promise<number> {
  const rows = await db.query<{ id: string; value: string }>(`select id, ${column} as value from ${table} where ${column} is not null`);
  let sealed = 0;
  for (const row of rows) {
    if (looksSealed(row.value)) continue;
    const updated = await db.query(`update ${table} set ${column} = $2 where id = $1 and ${column} = $3 returning id`, [row.id, box.seal(row.value), row.value]);
    sealed += updated.length;
  }
  return sealed;
}

/** Seals and opens secret strings. */
export interface SecretBox {
  seal(plain: string): string;
  /** The plain text, or throws when the value was not sealed with this key (or was altered). */
  open(sealed: string): string;
}

/** How a secret key is written (CNV_SECRET_KEY, `<data dir>/secret.key`). */
export const SECRET_KEY_FORM = '32 bytes, written as 64 hex characters or base64 (openssl rand -base64 32)';

/** A 32-byte key given as base64 (44 characters) or hex (64 characters), or null when the text holds none. */
export function secretKeyOf(raw: string): Buffer | null {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  return key.length === 32 ? key : null;
}

/** Reads a 32-byte key given as base64 (44 characters) or hex (64 characters). */
export function parseSecretKey(raw: string): Buffer {
  const key = secretKeyOf(raw);
  if (!key) throw new Error(`CNV_SECRET_KEY must be ${SECRET_KEY_FORM}.`);
  return key;
}

/** A secret box over a 32-byte key. */
export function secretBox(key: Buffer): SecretBox {
  return {
    seal(plain) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, nonce.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, nonce, body, tag] = sealed.split('.');
      if (version !== VERSION || !nonce || body === undefined || !tag) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

const boxes = new Map<string, SecretBox>();

/** The service's secret box: CNV_SECRET_KEY, else the key file of the data directory (created once, mode 600). */
export function serviceSecretBox(settings: { secretKey: string | undefined; dataDir: string }): SecretBox {
  const id = settings.secretKey ? `env:${settings.secretKey}` : `file:${settings.dataDir}`;
  let box = boxes.get(id);
  if (!box) {
    box = secretBox(settings.secretKey ? parseSecretKey(settings.secretKey) : keyFromDataDir(settings.dataDir));
    boxes.set(id, box);
  }
  return box;
}

/**
 * A keyed hash of the service for one purpose: HMAC-SHA256 (hex) under a key derived (HKDF-SHA256) from the service's
 * secret key, so a value can be recognised again (an erasure repeated) without being stored or guessable from the hash
 * by anyone without the secret. A different `purpose` gives unrelated hashes.
 */
export function serviceKeyedHash(settings: { secretKey: string | undefined; dataDir: string }, purpose: string): (value: string) => string {
  const master = settings.secretKey ? parseSecretKey(settings.secretKey) : keyFromDataDir(settings.dataDir);
  const key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `cnv ${purpose}`, 32));
  return (value) => createHmac('sha256', key).update(value, 'utf8').digest('hex');
}

/** The key file of a data directory, used while CNV_SECRET_KEY is unset. */
export function secretKeyFile(dataDir: string): string {
  return join(dataDir, 'secret.key');
}

function keyFromDataDir(dataDir: string): Buffer {
  const path = secretKeyFile(dataDir);
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      // 'wx': exactly one of several processes starting at once creates it; the others read it.
      writeFileSync(path, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return parseSecretKey(readFileSync(path, 'utf8'));
}
