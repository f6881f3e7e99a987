/**
 * The demo store backend's configuration: its cnv API key, kept in a file beside the service's data, as a customer
 * keeps theirs in their backend's environment. cnv stores only a hash of API keys, so the clear key must live here.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface DemoCredentials {
  api_key: string;
}

/** The stored credentials, or null when the file is missing or unreadable (the setup then issues new ones). */
export function readCredentials(file: string): DemoCredentials | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoCredentials>;
    return typeof parsed.api_key === 'string' && parsed.api_key !== '' ? { api_key: parsed.api_key } : null;
  } catch {
    return null;
  }
}

/** Writes the credentials, readable by this user only. */
export function writeCredentials(file: string, credentials: DemoCredentials): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
}
