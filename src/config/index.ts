// The whole configuration, read once from the environment and validated, one clear error per bad value.
import { join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { RETRY_SCHEDULE_S } from '../events/retry-schedule.ts';
import { isLoopbackHost } from '../lib/ssrf.ts';

export interface Config {
  host: string;
  port: number;
  baseUrl: string;
  checkoutUrlHost: string;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  logLevel: string;
  /**
   * The level of request-scoped log lines (a line per request, 4xx answers). On a developer's own machine (a
   * loopback BASE_URL) without LOG_LEVEL they are quiet ('warn': errors and warnings still show), so the
   * first-run banner stays on screen; LOG_LEVEL set, or a hosted instance: LOG_LEVEL.
   */
  requestLogLevel: string;
  rateLimitKeyPerSecond: number;
  rateLimitIpPerSecond: number;
  rateLimitSessionPerSecond: number;
  bodyLimitBytes: number;
  workersEnabled: boolean;
  webhookRetryScheduleS: number[];
  webhookTimeoutMs: number;
  webhookPollMs: number;
  webhookClaimTtlS: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: webhooks may go to loopback, private and other special-purpose addresses. */
  webhookAllowPrivateTargets: boolean;
  /** Never on by default: routes Live payouts to the in-process simulator (rehearsals and tests). */
  livePayoutSimulator: boolean;
  /**
   * TRUST_PROXY: which peers may say who the client is (X-Forwarded-For): false (nobody, the default), a
   * hop count, or addresses/CIDRs (and proxy-addr's names loopback, linklocal, uniquelocal). Passed to Fastify.
   */
  trustProxy: false | number | string[];
  /** METRICS_TOKEN: /metrics asks for it as a Bearer token. */
  metricsToken: string | null;
  /** METRICS_PORT: /metrics is served on this port of HOST only, not on the API port. */
  metricsPort: number | null;
  /** Whether /metrics is served on the API port: a token or a loopback BASE_URL; never on a hosted instance by accident. */
  metricsOnApiPort: boolean;
  /** The whole request head must arrive within this (a client trickling headers is cut off with 408). */
  httpHeadersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (408 otherwise). */
  httpRequestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this; keep it above the load balancer's idle timeout. */
  httpKeepAliveTimeoutMs: number;
  /** Live providers: each is enabled when its credentials are set (README "Going live"). */
  providers: ProviderSettings;
  /**
   * DEMO_MERCHANT (on by default): on its first start with an empty database the server creates a demo
   * merchant and prints its Test key and a one-time dashboard sign-in link. Never on a non-loopback BASE_URL.
   */
  demoMerchant: boolean;
  /** SMTP_URL (smtp:// or smtps://, user and password in the URL): where mail is sent; null: mail is written to the log (src/mail). */
  smtpUrl: string | null;
  /** MAIL_FROM: the From of every mail, e.g. "Sika <no-reply@example.com>". */
  mailFrom: string;
  /**
   * SMS_PROVIDER and its settings: where SMS (payers' receipts) go; provider 'none' writes them to the log
   * (src/sms, whose SmsSettings has this shape).
   */
  sms: SmsConfig;
  /**
   * CLEARING_DAYS: the Live clearing time per rail in Africa/Accra business days (0 = at once), e.g.
   * momo=1,card=2,bank_transfer=0,cash=0; rails left out keep their default. Handed to the ledger at start
   * (configureClearingDefaults); operators override it per merchant.
   */
  clearingDays: Record<string, number>;
  /** EVENT_RETENTION_DAYS: events older than this whose deliveries have finished are archived, then deleted (src/events/retention.ts). */
  eventRetentionDays: number;
  /** ARCHIVE_DIR: where archived events are written (gzip NDJSON); by default DATA_DIR/archive. */
  archiveDir: string;
}

export const LIVE_PROVIDERS = ['mtn_momo', 'paystack'] as const;
export type LiveProviderId = (typeof LIVE_PROVIDERS)[number];

export interface MtnMomoProduct {
  subscriptionKey: string;
  userId: string;
  apiKey: string;
}

export interface ProviderSettings {
  /** LIVE_PROVIDER_ORDER: which configured provider serves a rail or network first; the next only when the first refuses before accepting. */
  order: LiveProviderId[];
  /** PROVIDER_TIMEOUT_MS: a provider call without an answer after this is a lost answer (asked about, never re-sent). */
  timeoutMs: number;
  paystack: { secretKey: string; baseUrl: string } | null;
  mtnMomo: {
    baseUrl: string;
    targetEnvironment: string;
    collection: MtnMomoProduct | null;
    disbursement: MtnMomoProduct | null;
  } | null;
  /** The bank account Live bank transfers are paid into, matched from imported statements. */
  bankTransfer: {
    bankCode: string;
    bankName: string;
    branch: string;
    accountNumber: string;
    accountName: string;
  } | null;
}

const PAYSTACK_BASE_URL_DEFAULT = 'https://api.paystack.co';
// MTN MoMo Open API production host (https://momodeveloper.mtn.com/api-documentation); the sandbox is https://sandbox.momodeveloper.mtn.com.
const MTN_MOMO_BASE_URL_DEFAULT = 'https://proxy.momoapi.mtn.com';
const MTN_MOMO_TARGET_ENVIRONMENT_DEFAULT = 'mtnghana';

function providerSettings(
  env: NodeJS.ProcessEnv,
  problems: string[],
  url: (name: string, fallback: string | null, protocols: string[]) => string | null,
  timeoutMs: number,
): ProviderSettings {
  const orderRaw = (env.LIVE_PROVIDER_ORDER ?? '').trim() || 'mtn_momo,paystack';
  const order = orderRaw.split(',').map((part) => part.trim());
  const unknown = order.filter((id) => !(LIVE_PROVIDERS as readonly string[]).includes(id));
  if (unknown.length > 0 || new Set(order).size !== order.length) {
    problems.push(
      `LIVE_PROVIDER_ORDER must list distinct providers from ${LIVE_PROVIDERS.join(', ')} (got "${orderRaw}")`,
    );
  }
  const secretKey = env.PAYSTACK_SECRET_KEY?.trim() || '';
  const paystack = secretKey
    ? {
        secretKey,
        baseUrl: (
          url('PAYSTACK_BASE_URL', PAYSTACK_BASE_URL_DEFAULT, ['https:', 'http:']) ?? PAYSTACK_BASE_URL_DEFAULT
        ).replace(/\/+$/, ''),
      }
    : null;
  if (!secretKey && env.PAYSTACK_BASE_URL) problems.push('PAYSTACK_BASE_URL is set but PAYSTACK_SECRET_KEY is not');

  const product = (name: 'COLLECTION' | 'DISBURSEMENT'): MtnMomoProduct | null => {
    const keys = ['SUBSCRIPTION_KEY', 'USER_ID', 'API_KEY'].map((part) => `MTN_MOMO_${name}_${part}`);
    const values = keys.map((key) => env[key]?.trim() || '');
    if (values.every((value) => value === '')) return null;
    const missing = keys.filter((_, index) => values[index] === '');
    if (missing.length > 0) {
      problems.push(`${missing.join(', ')} must be set with the other MTN_MOMO_${name}_* settings`);
      return null;
    }
    return { subscriptionKey: values[0]!, userId: values[1]!, apiKey: values[2]! };
  };
  const collection = product('COLLECTION');
  const disbursement = product('DISBURSEMENT');
  const mtnMomo =
    collection || disbursement
      ? {
          baseUrl: (
            url('MTN_MOMO_BASE_URL', MTN_MOMO_BASE_URL_DEFAULT, ['https:', 'http:']) ?? MTN_MOMO_BASE_URL_DEFAULT
          ).replace(/\/+$/, ''),
          targetEnvironment: env.MTN_MOMO_TARGET_ENVIRONMENT?.trim() || MTN_MOMO_TARGET_ENVIRONMENT_DEFAULT,
          collection,
          disbursement,
        }
      : null;

  const bankKeys = ['BANK_CODE', 'BANK_NAME', 'BRANCH', 'ACCOUNT_NUMBER', 'ACCOUNT_NAME'].map(
    (part) => `BANK_TRANSFER_${part}`,
  );
  const bankValues = bankKeys.map((key) => env[key]?.trim() || '');
  let bankTransfer: ProviderSettings['bankTransfer'] = null;
  if (bankValues.some((value) => value !== '')) {
    const missing = bankKeys.filter((_, index) => bankValues[index] === '');
    if (missing.length > 0) problems.push(`${missing.join(', ')} must be set with the other BANK_TRANSFER_* settings`);
    else
      bankTransfer = {
        bankCode: bankValues[0]!,
        bankName: bankValues[1]!,
        branch: bankValues[2]!,
        accountNumber: bankValues[3]!,
        accountName: bankValues[4]!,
      };
  }
  return {
    order: order.filter((id): id is LiveProviderId => (LIVE_PROVIDERS as readonly string[]).includes(id)),
    timeoutMs,
    paystack,
    mtnMomo,
    bankTransfer,
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/** The From of mail when MAIL_FROM is not set. */
const MAIL_FROM_DEFAULT = 'Sika <no-reply@localhost>';
/** MAIL_FROM: one address, alone or as "Display Name <address>". */
const MAIL_FROM_PATTERN = /^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;

/** SMTP_URL: smtp:// or smtps:// with a host; a refusal never repeats the value (it holds the password). */
function smtpUrlSetting(raw: string | undefined, problems: string[]): string | null {
  const value = (raw ?? '').trim();
  if (value === '') return null;
  const parsed = URL.canParse(value) ? new URL(value) : null;
  if (!parsed || !['smtp:', 'smtps:'].includes(parsed.protocol) || !parsed.hostname) {
    problems.push(
      'SMTP_URL must be smtp://[USER:PASSWORD@]HOST[:PORT] or smtps://… (the value is not shown: it may hold a password)',
    );
    return null;
  }
  return value;
}

export interface SmsConfig {
  provider: 'none' | 'hubtel' | 'mnotify';
  hubtel: { clientId: string; clientSecret: string; sender: string; url: string } | null;
  mnotify: { apiKey: string; sender: string; url: string } | null;
}

/** Hubtel's documented SMS API base (https://businessdocs-developers.hubtel.com/docs/simple-messaging). */
const HUBTEL_SMS_URL_DEFAULT = 'https://sms.hubtel.com/v1';
/** mNotify's documented v2 API base (https://readthedocs.mnotify.com). */
const MNOTIFY_URL_DEFAULT = 'https://api.mnotify.com/api';
/** A sender id as both providers take it: at most 11 letters, digits and spaces, with a letter (no numeric ids). */
const SMS_SENDER_PATTERN = /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/;

/**
 * SMS_PROVIDER (none, hubtel or mnotify; none by default) and the named provider's settings, each required
 * when that provider is chosen; the secrets are never repeated in a refusal.
 */
function smsSetting(env: Record<string, string | undefined>, problems: string[]): SmsConfig {
  const provider = (env.SMS_PROVIDER ?? '').trim() || 'none';
  // A missing value is named, never a present one: the client secret and the API key are secrets.
  const required = (name: string): string => {
    const value = (env[name] ?? '').trim();
    if (!value) problems.push(`${name} must be set when SMS_PROVIDER is ${provider}`);
    return value;
  };
  const sender = (name: string): string => {
    const value = required(name);
    if (value && !SMS_SENDER_PATTERN.test(value))
      problems.push(`${name} must be 1 to 11 letters, digits or spaces, with a letter (got "${value}")`);
    return value;
  };
  const baseUrl = (name: string, fallback: string): string => {
    const value = (env[name] ?? '').trim() || fallback;
    const parsed = URL.canParse(value) ? new URL(value) : null;
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol))
      problems.push(`${name} must be an http:// or https:// URL (got "${value}")`);
    return value;
  };
  if (provider === 'hubtel') {
    return {
      provider,
      hubtel: {
        clientId: required('HUBTEL_SMS_CLIENT_ID'),
        clientSecret: required('HUBTEL_SMS_CLIENT_SECRET'),
        sender: sender('HUBTEL_SMS_SENDER'),
        url: baseUrl('HUBTEL_SMS_URL', HUBTEL_SMS_URL_DEFAULT),
      },
      mnotify: null,
    };
  }
  if (provider === 'mnotify') {
    return {
      provider,
      hubtel: null,
      mnotify: {
        apiKey: required('MNOTIFY_API_KEY'),
        sender: sender('MNOTIFY_SENDER'),
        url: baseUrl('MNOTIFY_URL', MNOTIFY_URL_DEFAULT),
      },
    };
  }
  if (provider !== 'none') problems.push(`SMS_PROVIDER must be none, hubtel or mnotify (got "${provider}")`);
  return { provider: 'none', hubtel: null, mnotify: null };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const METRICS_TOKEN_LENGTH_MIN = 16;
const TRUST_PROXY_HOPS_MAX = 10;
const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: off (default), a hop count (1 = the one load balancer in front), or a comma-separated list of
 * proxy addresses and CIDRs. "on"/"true" (believe any X-Forwarded-For) is refused: anyone could pick their
 * own address and with it a fresh rate-limit bucket.
 */
function trustProxySetting(raw: string | undefined, problems: string[]): false | number | string[] {
  const value = (raw ?? '').trim();
  if (value === '' || value === 'off' || value === 'false') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops >= 1 && hops <= TRUST_PROXY_HOPS_MAX) return hops;
  } else {
    const entries = value.split(',').map((entry) => entry.trim());
    const valid = (entry: string) => {
      if (TRUST_PROXY_NAMES.includes(entry)) return true;
      if (entry.includes('/')) {
        try {
          ipaddr.parseCIDR(entry);
          return true;
        } catch {
          return false;
        }
      }
      return ipaddr.isValid(entry);
    };
    if (entries.length > 0 && entries.every(valid)) return entries;
  }
  problems.push(
    `TRUST_PROXY must be off, a hop count from 1 to ${TRUST_PROXY_HOPS_MAX}, or a comma-separated list of proxy addresses or CIDRs (or ${TRUST_PROXY_NAMES.join(', ')}) (got "${value}")`,
  );
  return false;
}

/**
 * The Live clearing times when CLEARING_DAYS is not set: src/ledger/clearing.ts DEFAULT_LIVE_CLEARING_DAYS (this
 * folder may not import the ledger; test/config/clearing-days.test.ts keeps the two and the rail registry equal).
 */
export const CLEARING_DAYS_DEFAULT: Readonly<Record<string, number>> = Object.freeze({
  momo: 1,
  card: 2,
  bank_transfer: 0,
  cash: 0,
});
/** The most business days CLEARING_DAYS gives a rail (src/ledger/clearing.ts CLEARING_DAYS_MAX). */
const CLEARING_DAYS_SETTING_MAX = 30;

/** CLEARING_DAYS: rail=days pairs, comma-separated, each rail known and once, days 0-30; others keep their default. */
function clearingDaysSetting(raw: string | undefined, problems: string[]): Record<string, number> {
  const days: Record<string, number> = { ...CLEARING_DAYS_DEFAULT };
  const value = (raw ?? '').trim();
  if (value === '') return days;
  const rails = Object.keys(CLEARING_DAYS_DEFAULT);
  const seen = new Set<string>();
  for (const part of value.split(',').map((pair) => pair.trim())) {
    const match = /^([a-z_]+)\s*=\s*(\d+)$/.exec(part);
    const rail = match?.[1];
    if (!match || !rail) {
      problems.push(
        `CLEARING_DAYS must be rail=days pairs separated by commas, like momo=1,card=2,bank_transfer=0,cash=0 (got "${part.slice(0, 40)}")`,
      );
      return { ...CLEARING_DAYS_DEFAULT };
    }
    if (!rails.includes(rail)) {
      problems.push(`CLEARING_DAYS names an unknown rail "${rail.slice(0, 40)}"; the rails are ${rails.join(', ')}`);
      return { ...CLEARING_DAYS_DEFAULT };
    }
    if (seen.has(rail)) {
      problems.push(`CLEARING_DAYS names ${rail} twice`);
      return { ...CLEARING_DAYS_DEFAULT };
    }
    seen.add(rail);
    const count = Number(match[2]);
    if (count > CLEARING_DAYS_SETTING_MAX) {
      problems.push(
        `CLEARING_DAYS gives ${rail} ${count} days; a clearing time is 0 to ${CLEARING_DAYS_SETTING_MAX} business days`,
      );
      return { ...CLEARING_DAYS_DEFAULT };
    }
    days[rail] = count;
  }
  return days;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const url = (name: string, fallback: string | null, protocols: string[]): string | null => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must use ${protocols.join(' or ')} (got "${parsed.protocol}")`);
        return fallback;
      }
      return raw;
    } catch {
      problems.push(`${name} must be a URL (got "${raw}")`);
      return fallback;
    }
  };

  const host = env.HOST || '127.0.0.1';
  const port = integer('PORT', 8080, 0, 65535);
  const baseUrl = (
    url('BASE_URL', null, ['http:', 'https:']) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  const checkoutUrlHost = (url('CHECKOUT_URL_HOST', null, ['http:', 'https:']) ?? baseUrl).replace(/\/+$/, '');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  const workers = env.WORKERS ?? 'on';
  if (!['on', 'off'].includes(workers)) problems.push(`WORKERS must be on or off (got "${workers}")`);

  const onOff = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw !== 'on' && raw !== 'off') {
      problems.push(`${name} must be on or off (got "${raw}")`);
      return fallback;
    }
    return raw === 'on';
  };

  const schedule = (name: string, fallback: number[]): number[] => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const parts = raw.split(',').map((part) => part.trim());
    if (parts.length > 20 || !parts.every((part) => /^\d+$/.test(part) && Number(part) <= 7 * 86_400)) {
      problems.push(`${name} must be a comma-separated list of at most 20 delays in seconds (got "${raw}")`);
      return fallback;
    }
    return parts.map(Number);
  };

  const trustProxy = trustProxySetting(env.TRUST_PROXY, problems);
  const metricsToken = env.METRICS_TOKEN || null;
  if (metricsToken !== null && (metricsToken.length < METRICS_TOKEN_LENGTH_MIN || /\s/.test(metricsToken))) {
    problems.push(`METRICS_TOKEN must be at least ${METRICS_TOKEN_LENGTH_MIN} characters without spaces`);
  }
  const metricsPort = env.METRICS_PORT ? integer('METRICS_PORT', 0, 1, 65535) : null;
  if (metricsPort !== null && metricsPort === port) problems.push(`METRICS_PORT must differ from PORT (${port})`);
  const metricsOnApiPort =
    metricsPort === null &&
    (metricsToken !== null || (URL.canParse(baseUrl) && isLoopbackHost(new URL(baseUrl).hostname)));
  const httpHeadersTimeoutMs = integer('HTTP_HEADERS_TIMEOUT_MS', 10_000, 1_000, 120_000);
  const httpRequestTimeoutMs = integer('HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000);
  const httpKeepAliveTimeoutMs = integer('HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1_000, 600_000);
  if (httpRequestTimeoutMs < httpHeadersTimeoutMs) {
    problems.push(
      `HTTP_REQUEST_TIMEOUT_MS (${httpRequestTimeoutMs}) must be at least HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs})`,
    );
  }

  const config: Config = {
    host,
    port,
    baseUrl,
    checkoutUrlHost,
    dataDir: env.DATA_DIR || './.sika',
    databaseUrl: url('DATABASE_URL', null, ['postgres:', 'postgresql:']),
    redisUrl: url('REDIS_URL', null, ['redis:', 'rediss:']),
    logLevel,
    requestLogLevel:
      !env.LOG_LEVEL && URL.canParse(baseUrl) && isLoopbackHost(new URL(baseUrl).hostname) ? 'warn' : logLevel,
    rateLimitKeyPerSecond: integer('RATE_LIMIT_KEY_PER_S', 100, 1, 1_000_000),
    rateLimitIpPerSecond: integer('RATE_LIMIT_IP_PER_S', 100, 1, 1_000_000),
    rateLimitSessionPerSecond: integer('RATE_LIMIT_SESSION_PER_S', 10, 1, 1_000_000),
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', 1_048_576, 1024, 64 * 1_048_576),
    workersEnabled: workers === 'on',
    webhookRetryScheduleS: schedule('WEBHOOK_RETRY_SCHEDULE_S', [...RETRY_SCHEDULE_S]),
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookPollMs: integer('WEBHOOK_POLL_MS', 50, 5, 10_000),
    webhookClaimTtlS: integer('WEBHOOK_CLAIM_TTL_S', 30, 1, 3_600),
    // On by default only on a developer's own machine (BASE_URL is loopback); a hosted instance must not
    // let strangers aim its webhooks at its own network.
    webhookAllowPrivateTargets: onOff(
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      URL.canParse(baseUrl) && isLoopbackHost(new URL(baseUrl).hostname),
    ),
    livePayoutSimulator: env.LIVE_PAYOUT_SIMULATOR === 'on',
    trustProxy,
    metricsToken,
    metricsPort,
    metricsOnApiPort,
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs,
    providers: providerSettings(env, problems, url, integer('PROVIDER_TIMEOUT_MS', 15_000, 100, 120_000)),
    demoMerchant: onOff('DEMO_MERCHANT', true) && URL.canParse(baseUrl) && isLoopbackHost(new URL(baseUrl).hostname),
    smtpUrl: smtpUrlSetting(env.SMTP_URL, problems),
    mailFrom: (env.MAIL_FROM ?? '').trim() || MAIL_FROM_DEFAULT,
    sms: smsSetting(env, problems),
    clearingDays: clearingDaysSetting(env.CLEARING_DAYS, problems),
    eventRetentionDays: integer('EVENT_RETENTION_DAYS', 90, 7, 36_500),
    archiveDir: env.ARCHIVE_DIR || join(env.DATA_DIR || './.sika', 'archive'),
  };
  if (env.LIVE_PAYOUT_SIMULATOR !== undefined && !['on', 'off', ''].includes(env.LIVE_PAYOUT_SIMULATOR)) {
    problems.push(`LIVE_PAYOUT_SIMULATOR must be on or off (got "${env.LIVE_PAYOUT_SIMULATOR}")`);
  }
  if (config.webhookClaimTtlS * 1000 <= config.webhookTimeoutMs) {
    problems.push(
      `WEBHOOK_CLAIM_TTL_S (${config.webhookClaimTtlS} s) must be longer than WEBHOOK_TIMEOUT_MS (${config.webhookTimeoutMs} ms)`,
    );
  }
  const mailFrom = (env.MAIL_FROM ?? '').trim();
  if (mailFrom && !MAIL_FROM_PATTERN.test(mailFrom))
    problems.push(`MAIL_FROM must be an address or "Name <address>" (got "${mailFrom}")`);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
