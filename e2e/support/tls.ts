/**
 * A throwaway self-signed certificate for the browser tests' https listeners, made at setup time with the `openssl`
 * CLI. The key never stays on disk: openssl writes it into a private temp folder that is removed at once, and the
 * servers get it from memory. Chromium is told to accept it through Playwright's `ignoreHTTPSErrors` (only in the
 * tests that use https); the names are still right, so nothing else about the connection is unusual.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Certificate {
  /** PEM private key. */
  key: string;
  /** PEM certificate. */
  cert: string;
}

/** A self-signed certificate (P-256, valid two days) for `hostNames` (wildcards allowed: `*.example.com`). */
export function throwawayCertificate(hostNames: readonly string[]): Certificate {
  const dir = mkdtempSync(join(tmpdir(), 'cnv-e2e-tls-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          keyFile,
          '-out',
          certFile,
          '-days',
          '2',
          '-subj',
          '/CN=cnv browser tests',
          '-addext',
          `subjectAltName=${hostNames.map((name) => `DNS:${name}`).join(',')}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
    } catch (error) {
      const detail = (error as { code?: string; stderr?: Buffer }).code === 'ENOENT' ? 'openssl is not installed (apt-get install openssl)' : String((error as { stderr?: Buffer }).stderr ?? error);
      throw new Error(`could not make the browser tests' throwaway certificate: ${detail}`);
    }
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
