// SSRF guard for Live webhook endpoints: HTTPS only; the host must resolve only to public addresses;
// the connection is pinned to the address that was checked (no second DNS answer can swap it).
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (and some cloud metadata, e.g. 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local (includes fd00:ec2::254, AWS metadata)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
  ['100::', 64], // discard
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** IPv4 embedded in IPv6 (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, compatible ::a.b.c.d) is judged as IPv4. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1]!;
  // URL parsing writes every one of these in hex ([::127.0.0.1] -> [::7f00:1]), so the compatible form too.
  const hex = /^(?:::ffff:|64:ff9b::|::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return null;
}

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) return blocked.check(v4, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true; // not an address at all
}

export class UnsafeUrlError extends Error {}

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Checks a webhook URL before a delivery and returns the address to connect to. Live: HTTPS, and every
 * address the name resolves to must be public. Test: http or https, any address (local development).
 */
export async function resolveTarget(rawUrl: string, environment: 'test' | 'live', resolver: Resolver = systemResolver): Promise<ResolvedTarget> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new UnsafeUrlError('the endpoint URL is not a URL');
  }
  if (url.username || url.password) throw new UnsafeUrlError('the endpoint URL must not carry credentials');
  if (environment === 'live' && url.protocol !== 'https:') throw new UnsafeUrlError('Live endpoints must use https');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UnsafeUrlError('the endpoint URL must be http(s)');
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  let answers: { address: string; family: number }[];
  if (isIP(hostname)) {
    answers = [{ address: hostname, family: isIP(hostname) }];
  } else {
    try {
      answers = await resolver(hostname);
    } catch {
      throw new UnsafeUrlError(`the endpoint host ${hostname} does not resolve`);
    }
  }
  if (answers.length === 0) throw new UnsafeUrlError(`the endpoint host ${hostname} does not resolve`);
  if (environment === 'live') {
    const bad = answers.find((answer) => isBlockedAddress(answer.address));
    if (bad) throw new UnsafeUrlError(`the endpoint host resolves to a private or reserved address (${bad.address}); Live endpoints must be public`);
  }
  const chosen = answers[0]!;
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
