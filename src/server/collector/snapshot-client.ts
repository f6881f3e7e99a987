/**
 * What the collector records of the request that carried a snapshot: the visitor's user agent and IP address, which
 * Meta's Conversions API wants with a website event (`client_user_agent`, `client_ip_address`). Read from the request,
 * never from the body. Stored with the snapshot only, and deleted with it by retention.
 */
import { isIP } from 'node:net';
import type { SnapshotClient } from './sql';

/** Longest user agent kept, in characters (real ones are a few hundred; the rest of a longer header is dropped). */
export const USER_AGENT_MAX = 1024;

/** The parts of a Fastify request read here. */
export interface ClientRequest {
  headers: { 'user-agent'?: string | undefined };
  /** Fastify's `request.ip`: the socket's address, or the forwarded client's when the app trusts its proxy (`trustProxy`). */
  ip: string | undefined;
}

/** The user agent and IP address of the request that carried a snapshot (each null when absent or unusable). */
export function snapshotClientOf(request: ClientRequest): SnapshotClient {
  const agent = request.headers['user-agent']?.trim();
  return { userAgent: agent ? agent.slice(0, USER_AGENT_MAX) : null, ipAddress: clientIp(request.ip) };
}

/** An IP address in the form an ad platform expects: IPv4 dotted (also when it came IPv4-mapped), IPv6 without a zone. */
export function clientIp(value: string | undefined): string | null {
  if (!value) return null;
  let ip = value.trim().replace(/%.*$/, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  return isIP(ip) === 0 ? null : ip.toLowerCase();
}
