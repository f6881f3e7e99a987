/** Where notifications may go: https anywhere, plain http only to this machine (development). */
import { isIP } from 'node:net';

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1';
  return false;
}

/** Why a URL cannot be a notification endpoint, or null when it can. */
export function endpointUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url must be an absolute URL, e.g. https://example.com/webhooks/cnv.';
  }
  if (url.username || url.password) return 'url must not carry a user name or password.';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return null;
  return 'url must use https (plain http is accepted only for loopback: localhost, *.localhost, 127.x.x.x or ::1, for development).';
}
