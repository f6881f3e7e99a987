/**
 * Where notifications may go. An account chooses the URL, so the service must not become a way into its own machine
 * or network (server-side request forgery): unless the operator allows private addresses
 * (`CNV_NOTIFICATION_PRIVATE_ADDRESSES`, on by default only on a developer's machine: listening on loopback with no
 * public URL beyond it), an endpoint must be https and reach only public addresses: a host given as such an address is refused when
 * the endpoint is created, and a name is resolved at every send and refused when any of its addresses is one (the
 * connection then goes to the address that was checked, so a second DNS answer cannot swap it).
 */
import { BlockList, isIP } from 'node:net';
import { isLoopbackHost } from '../settings';

/** Whether the policy lets notifications reach loopback and private addresses (and plain http to loopback). */
export interface EndpointPolicy {
  privateAddresses: boolean;
  /** How names are resolved (node:dns lookup by default; tests give their own). */
  lookup?: typeof import('node:dns').lookup;
}

/**
 * Addresses that are not on the public internet: this host, private and shared networks, link-local (cloud metadata at
 * 169.254.169.254), benchmarking, documentation, multicast and reserved ranges, and the IPv6 equivalents (an
 * IPv4-mapped or NAT64 address is judged by the IPv4 address it carries).
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
  // Teredo (its client's IPv4 address is hidden in the last 32 bits) and NAT64's local-use prefix (RFC 8215).
  ['2001::', 32], ['64:ff9b:1::', 48],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail counted as two), or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const part = (half: string) => (half === '' ? [] : half.split(':').map((g) => parseInt(g, 16)));
  const head = part(halves[0]!);
  const rest = halves.length === 2 ? part(halves[1]!) : [];
  const groups = halves.length === 2 ? [...head, ...Array<number>(8 - head.length - rest.length).fill(0), ...rest] : head;
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const dotted = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * The IPv4 address an IPv6 address carries and leads to, if any: IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96)
 * and 6to4 (2002:aabb:ccdd::/48, RFC 3056: the relay delivers to a.b.c.d).
 */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!);
  return null;
}

/** Whether an IP address is on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  return v4 ? isPublicAddress(v4) : !NOT_PUBLIC.check(address, 'ipv6');
}

/** The host of a URL as an address or name, without IPv6 brackets or a final dot (`localhost.`), lower case. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/** Why a URL cannot be a notification endpoint under `policy`, or null when it can (its name still checked at send). */
export function endpointUrlProblem(value: string, policy: EndpointPolicy): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url must be an absolute URL, e.g. https://example.com/webhooks/cnv.';
  }
  if (url.username || url.password) return 'url must not carry a user name or password.';
  if (url.port === '0') return 'url must not use port 0: nothing can listen there.';
  const host = hostOf(url);
  if (policy.privateAddresses) {
    if (url.protocol === 'https:') return null;
    if (url.protocol === 'http:' && isLoopbackHost(host)) return null;
    return 'url must use https (plain http is accepted only for loopback: localhost, *.localhost, 127.x.x.x or ::1, for development).';
  }
  if (url.protocol !== 'https:') return 'url must use https.';
  if (isLoopbackHost(host) || (isIP(host) !== 0 && !isPublicAddress(host))) {
    return 'url must reach a public address: this service does not send notifications to its own machine or to private networks.';
  }
  return null;
}

/**
 * Why a URL cannot be registered as a notification endpoint: endpointUrlProblem's reasons, and a `#fragment`, which no
 * request carries (two endpoints told apart by one would reach one address). Checked when an endpoint is created only:
 * one stored before this rule still sends, to its URL without the fragment, as it always did.
 */
export function newEndpointUrlProblem(value: string, policy: EndpointPolicy): string | null {
  return endpointUrlProblem(value, policy) ?? (value.includes('#') ? 'url must not carry a #fragment: it is never sent to the receiver.' : null);
}
