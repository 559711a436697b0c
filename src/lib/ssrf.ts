// The one rule for webhook targets (DESIGN §3 Webhooks), at endpoint creation and before every delivery, in
// both environments: http or https (https for Live), no credentials, and, unless the deployment allows private
// targets (WEBHOOK_ALLOW_PRIVATE_TARGETS), every address the host resolves to must be public unicast. The
// connection is pinned to the address that was checked (no second DNS answer can swap it). A refusal never
// names a resolved address: it would tell a stranger what an internal name points at.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ExpiringMap } from './expiring-map.ts';

/** IANA's global unicast block: the rest of IPv6 (IPv4-compatible ::/96 among it) is never a public target. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** How long a host name may take to resolve, at creation and before each delivery try. */
export const RESOLVE_TIMEOUT_MS = 5_000;
export const WEBHOOK_URL_LENGTH_MAX = 2_000;

/**
 * Blocked unless ipaddr.js's range table (RFC 6890 and later) calls it plain `unicast`. That refuses private,
 * loopback, link-local (metadata 169.254.169.254), carrier-grade NAT (metadata 100.100.100.200), unique local
 * (metadata fd00:ec2::254), site-local, multicast, documentation, benchmarking, reserved, 0.0.0.0/8 and
 * broadcast, and every IPv6 form that carries an IPv4 address for a translator or tunnel to reach: NAT64
 * (64:ff9b::/96, 64:ff9b:1::/48), IPv4-translated (::ffff:0:a.b.c.d), 6to4 (2002::/16), Teredo (2001::/32) and
 * IPv4-compatible (::a.b.c.d, outside 2000::/3). IPv4-mapped (::ffff:a.b.c.d) is judged as its IPv4 address,
 * since connecting to it reaches that address. Anything that is not a plain address (a name, a zone) is blocked.
 */
export function isBlockedAddress(address: string): boolean {
  // Node's own test: the resolver and the URL parser hand over canonical text; odd spellings are not trusted.
  if (isIP(address) === 0 || address.includes('%')) return true;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv6' && !parsed.match(IPV6_GLOBAL_UNICAST)) return true;
  return parsed.range() !== 'unicast';
}

/** BASE_URL's host is this machine (127.0.0.0/8, ::1, localhost): the default for WEBHOOK_ALLOW_PRIVATE_TARGETS. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost') return true;
  return isIP(host) !== 0 && ipaddr.process(host).range() === 'loopback';
}

/** A target the rule refuses; `problem` ends the sentence "The URL ...", with no resolved address in it. */
export class UnsafeUrlError extends Error {
  constructor(readonly problem: string) {
    super(`the endpoint URL ${problem}`);
  }
}

/**
 * One refusal for a private answer and for no answer at all: were they told apart, a stranger could map
 * which names exist inside this deployment's network.
 */
export const PRIVATE_TARGET_PROBLEM =
  'does not resolve to public addresses only: it resolves to a private or reserved address, or not at all (this deployment delivers only to public addresses)';
const UNRESOLVED_PROBLEM = 'names a host that does not resolve';

/** WEBHOOK_ALLOW_PRIVATE_TARGETS: when true, loopback, private and other special-purpose targets pass. */
export interface TargetPolicy {
  allowPrivateTargets: boolean;
}

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** How long a delivery worker reuses a name's answers that passed the rule, instead of asking DNS before every try. */
export const ACCEPTED_ANSWER_CACHE_MS = 5_000;
const ACCEPTED_ANSWER_CACHE_ENTRIES_MAX = 10_000;

/**
 * A resolver that remembers, briefly, the answers that pass the policy (every address public, or private
 * targets allowed). Connections are pinned to a checked address, so a reused answer can only send to an
 * address that was public a few seconds ago; an answer the rule refuses, and a failure, is asked again at
 * the next try, so a refusal is always judged on a fresh answer.
 */
export function cachingResolver(
  resolver: Resolver,
  policy: TargetPolicy,
  cacheMs = ACCEPTED_ANSWER_CACHE_MS,
): Resolver {
  const accepted = new ExpiringMap<string, { address: string; family: number }[]>(
    cacheMs,
    ACCEPTED_ANSWER_CACHE_ENTRIES_MAX,
  );
  return async (hostname) => {
    const key = hostname.toLowerCase();
    const cached = accepted.get(key);
    if (cached) return cached;
    const answers = await resolver(hostname);
    if (
      answers.length > 0 &&
      (policy.allowPrivateTargets || !answers.some((answer) => isBlockedAddress(answer.address)))
    )
      accepted.set(key, answers);
    return answers;
  };
}

/** The URL's own rules, with no lookup: an absolute http(s) URL, https for Live, no credentials. */
function parseTargetUrl(rawUrl: string, environment: 'test' | 'live'): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new UnsafeUrlError('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UnsafeUrlError(environment === 'live' ? 'must use https' : 'must use http or https');
  if (environment === 'live' && url.protocol !== 'https:') throw new UnsafeUrlError('must use https for Live');
  if (url.username || url.password) throw new UnsafeUrlError('must not carry credentials');
  return url;
}

/** localhost and *.localhost are this machine whatever a resolver answers (RFC 6761). */
const isLocalhostName = (hostname: string) => /(^|\.)localhost$/.test(hostname.replace(/\.$/, '').toLowerCase());

async function resolveWithin(hostname: string, resolver: Resolver): Promise<{ address: string; family: number }[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new UnsafeUrlError(`names a host that did not resolve within ${RESOLVE_TIMEOUT_MS} ms`)),
      RESOLVE_TIMEOUT_MS,
    );
  });
  try {
    const answers = await Promise.race([resolver(hostname), deadline]);
    if (answers.length === 0) throw new UnsafeUrlError(UNRESOLVED_PROBLEM);
    return answers;
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw error;
    throw new UnsafeUrlError(UNRESOLVED_PROBLEM);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Judges a webhook URL before a delivery and returns the address to connect to. Unless the policy allows
 * private targets, every address the host resolves to must be public (one private answer among public ones
 * is enough to refuse: the connection could be steered to it). Nothing is connected to when it throws.
 */
export async function resolveTarget(
  rawUrl: string,
  environment: 'test' | 'live',
  policy: TargetPolicy,
  resolver: Resolver = systemResolver,
): Promise<ResolvedTarget> {
  const url = parseTargetUrl(rawUrl, environment);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivateTargets && isLocalhostName(hostname)) throw new UnsafeUrlError(PRIVATE_TARGET_PROBLEM);
  // The URL parser has already turned decimal, octal and hex IPv4 spellings (2130706433, 0x7f.1) into dotted form.
  const answers = isIP(hostname)
    ? [{ address: hostname, family: isIP(hostname) }]
    : await resolveWithin(hostname, resolver).catch((error: unknown) => {
        throw !policy.allowPrivateTargets && error instanceof UnsafeUrlError && error.problem === UNRESOLVED_PROBLEM
          ? new UnsafeUrlError(PRIVATE_TARGET_PROBLEM)
          : error;
      });
  if (!policy.allowPrivateTargets && answers.some((answer) => isBlockedAddress(answer.address)))
    throw new UnsafeUrlError(PRIVATE_TARGET_PROBLEM);
  const address = answers[0]!.address;
  const family = isIP(address);
  if (family === 0) throw new UnsafeUrlError(policy.allowPrivateTargets ? UNRESOLVED_PROBLEM : PRIVATE_TARGET_PROBLEM);
  return { url, address, family: family === 6 ? 6 : 4 };
}

/**
 * The same rule for a URL about to be stored as an endpoint: the problem ("must use https for Live") or null.
 * With private targets allowed every address passes, so nothing is looked up (a name may be set up later).
 */
export async function targetUrlProblem(
  rawUrl: string,
  environment: 'test' | 'live',
  policy: TargetPolicy,
  resolver: Resolver = systemResolver,
): Promise<string | null> {
  if (rawUrl.length > WEBHOOK_URL_LENGTH_MAX) return `must be at most ${WEBHOOK_URL_LENGTH_MAX} characters`;
  try {
    if (policy.allowPrivateTargets) parseTargetUrl(rawUrl, environment);
    else await resolveTarget(rawUrl, environment, policy, resolver);
    return null;
  } catch (error) {
    if (error instanceof UnsafeUrlError) return error.problem;
    throw error;
  }
}
