// The sika command. Works against the configured storage (DATABASE_URL, else DATA_DIR).
import { parseArgs } from 'node:util';
import { read } from 'read';
import { passwordProblem, resetSecondFactor, setPassword } from '../accounts/console-accounts.ts';
import { createApiKey, revokeMerchantApiKey } from '../accounts/api-keys.ts';
import { ENVIRONMENTS, type Environment } from '../accounts/model.ts';
import { createMerchant } from '../accounts/service.ts';
import { findMerchant, listApiKeys, merchantIdExists } from '../accounts/store.ts';
import { isUuid } from '../lib/ids.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openDb } from '../db/index.ts';
import { DataDirInUseError } from '../db/embedded.ts';
import { migrate } from '../db/migrate.ts';
import { SikaError } from '../lib/errors.ts';
import { listWebhookEndpoints, rotateAnyWebhookSecret } from '../accounts/webhook-endpoints.ts';
import { replayEvent } from '../events/replay.ts';
import * as events from '../events/store.ts';
import { setPayoutAccess } from '../payouts/settings.ts';
import { createOperator } from '../ops/service.ts';
import { CLI_ACTOR, UsageError } from './common.ts';
import { statementsCommand } from './statements.ts';
import { listenCommand } from './listen.ts';
import { triggerCommand } from './trigger.ts';

/** `sika events list`: rows shown by default and at most. */
const EVENTS_LIST_ROWS_DEFAULT = 20;
const EVENTS_LIST_ROWS_MAX = 1_000;

const USAGE = `usage: sika <command> [options]

commands:
  merchant create --name NAME --email EMAIL [--password PW] [--webhook-url URL] [--payout-approval] [--json]
      Creates a merchant with an owner user, a Test and a Live integration and API key, and, with
      --webhook-url, a webhook endpoint paired with each key (Live only for an https URL).
  migrate
      Applies pending database migrations (the server also does this at start).
  events list [--merchant ID] [--limit N] [--json]
      Recent events with the state of their webhook deliveries.
  events show EVENT_ID
      The event's payload and every delivery try (time, HTTP status, latency, error, response excerpt).
  events replay EVENT_ID | --failed-since ISO_TIME [--merchant ID]
      Sends an event again (same event id), or every event whose delivery failed since a time.
  user set-password --email EMAIL [--operator] [--password-stdin]
      Sets a dashboard user's (or with --operator an operator's) password: asked for twice on the
      terminal without echo, or read from standard input. Signs out all their sessions and clears
      their sign-in backoff. A merchant created without --password can sign in after this.
  user reset-2fa --email EMAIL
      Turns off a dashboard user's two-factor authentication (phone and recovery codes lost) and
      signs out their sessions; if the owner requires it, they set it up again at their next sign-in.
  operator create --email EMAIL --password PW [--role operator|teller] [--json]
      Creates an operator account for the console at /ops (tellers record cash deposits).
  payouts settings --merchant ID --environment test|live [--access on|off] [--paused on|off]
                   [--limit PESEWAS] [--daily-limit PESEWAS] [--json]
      Shows, or as an operator changes, payout access, pause and limits (payout access is off in Live
      until turned on here).
  keys list --merchant ID [--environment test|live] [--json]
      The merchant's API keys (prefix, environment, created, last used, revoked); never the secret.
  keys create --merchant ID --environment test|live [--json]
      A new API key (shown once), created on behalf of the merchant's owner.
  keys revoke KEY_ID|PREFIX --merchant ID
      Revokes a key: every server process refuses it within 1 second.
  webhooks list --merchant ID
  webhooks rotate-secret ENDPOINT_ID [--overlap-hours H]
      A new signing secret; the old one keeps signing too for H hours (default 24).
  statements import FILE --bank CODE [--columns MAPPING] [--json]
      Imports a bank statement (CSV) of the bank transfer collection account and matches its credits
      to Live bank transfers by payment reference and amount (sika statements --help for more).
  listen --forward-to URL [--events TYPE,...] [--secret whsec_…] [--api-key KEY] [--base-url URL]
      Streams a Test key's events from a running server to a local URL, signed as webhooks (sika listen --help).
  trigger EVENT [--override FIELD=VALUE ...] [--api-key KEY] [--base-url URL]
      Makes real Test objects through the API so that the event happens (sika trigger --help lists them).

Storage: PostgreSQL when DATABASE_URL is set, else the embedded data dir DATA_DIR (default ./.sika),
which one process may use at a time: stop the server before running a command against it.`;


async function merchantCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'webhook-url': { type: 'string' },
      'payout-approval': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.name || !values.email) throw new UsageError('merchant create needs --name and --email');
  const config = loadConfig();
  const db = await openDb(config);
  try {
    const created = await createMerchant(
      db,
      { name: values.name, email: values.email, password: values.password ?? null, webhookUrl: values['webhook-url'] ?? null, payoutApproval: values['payout-approval'] },
      { allowPrivateTargets: config.webhookAllowPrivateTargets },
    );
    for (const warning of created.warnings) console.error(`warning: ${warning}`);
    const output = {
      merchant_id: created.merchant_id,
      test_api_key: created.test_api_key,
      live_api_key: created.live_api_key,
      test_webhook_secret: created.test_webhook_secret,
      live_webhook_secret: created.live_webhook_secret,
    };
    if (values.json) {
      console.log(JSON.stringify(output));
    } else {
      console.log(`merchant ${output.merchant_id} created`);
      console.log(`  Test API key: ${output.test_api_key}`);
      console.log(`  Live API key: ${output.live_api_key}`);
      if (output.test_webhook_secret) console.log(`  Test webhook secret: ${output.test_webhook_secret}`);
      if (output.live_webhook_secret) console.log(`  Live webhook secret: ${output.live_webhook_secret}`);
      console.log('The keys are shown once; store them now.');
    }
  } finally {
    await db.close();
  }
}

async function migrateCommand(): Promise<void> {
  const db = await openDb(loadConfig(), { migrate: false });
  try {
    const applied = await migrate(db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply: the schema is up to date');
  } finally {
    await db.close();
  }
}

async function withDb<T>(fn: (db: Awaited<ReturnType<typeof openDb>>) => Promise<T>): Promise<T> {
  const db = await openDb(loadConfig());
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function eventsCommand(sub: string | undefined, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { merchant: { type: 'string' }, limit: { type: 'string', default: String(EVENTS_LIST_ROWS_DEFAULT) }, json: { type: 'boolean', default: false }, 'failed-since': { type: 'string' } },
  });
  await withDb(async (db) => {
    if (sub === 'list') {
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > EVENTS_LIST_ROWS_MAX) throw new UsageError(`--limit must be 1 to ${EVENTS_LIST_ROWS_MAX}`);
      const rows = await events.listEvents(db, { merchantId: values.merchant ?? null, limit });
      if (values.json) console.log(JSON.stringify(rows));
      else for (const row of rows) console.log(`${row.created_at.toISOString()}  ${row.id}  ${row.type.padEnd(30)} ${row.object_id}  ${row.deliveries ?? 'no endpoint'}`);
    } else if (sub === 'show') {
      const id = positionals[0];
      if (!id) throw new UsageError('events show needs an EVENT_ID');
      const payload = await events.findEventPayload(db, id);
      if (payload === null) throw new SikaError('NOT_FOUND', `event ${id} not found`);
      console.log(payload);
      for (const t of await events.listTries(db, id)) {
        console.log(`try ${t.try_number}  ${t.tried_at.toISOString()}  ${t.url}  ${t.http_status ?? '-'}  ${t.latency_ms} ms  ${t.error ?? ''}  ${(t.response_excerpt ?? '').slice(0, 120).replace(/\s+/g, ' ')}`);
      }
    } else if (sub === 'replay') {
      const since = values['failed-since'];
      const ids = since ? (await events.failedEventIdsSince(db, parseTime(since), values.merchant ?? null)).map((r) => r.event_id) : positionals.slice(0, 1);
      if (ids.length === 0 && !since) throw new UsageError('events replay needs an EVENT_ID or --failed-since');
      for (const id of ids) {
        const queued = await replayEvent(db, id);
        if (queued < 0) throw new SikaError('NOT_FOUND', `event ${id} not found`);
        console.log(`${id}: ${queued} deliver${queued === 1 ? 'y' : 'ies'} queued`);
      }
      if (since) console.log(`${ids.length} event(s) replayed; the server's delivery worker sends them`);
    } else {
      throw new UsageError(`unknown command: events ${sub ?? ''}`);
    }
  });
}

function parseTime(value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new UsageError(`not a time: ${value} (use ISO 8601, e.g. 2026-11-22T10:00:00Z)`);
  return date;
}

async function webhooksCommand(sub: string | undefined, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { merchant: { type: 'string' }, 'overlap-hours': { type: 'string', default: '24' } } });
  await withDb(async (db) => {
    if (sub === 'list') {
      if (!values.merchant) throw new UsageError('webhooks list needs --merchant');
      for (const e of await listWebhookEndpoints(db, values.merchant)) console.log(`${e.id}  ${e.environment}  ${e.status}  ${e.url}${e.disabled_reason ? `  (${e.disabled_reason})` : ''}`);
    } else if (sub === 'rotate-secret') {
      const id = positionals[0];
      if (!id) throw new UsageError('webhooks rotate-secret needs an ENDPOINT_ID');
      const hours = Number(values['overlap-hours']);
      const rotated = await rotateAnyWebhookSecret(db, id, Math.round(hours * 3_600));
      console.log(JSON.stringify(rotated));
    } else {
      throw new UsageError(`unknown command: webhooks ${sub ?? ''}`);
    }
  });
}


function environmentOption(value: string | undefined, required: boolean): Environment | null {
  if (value === undefined && !required) return null;
  if (value !== 'test' && value !== 'live') throw new UsageError('--environment takes test or live');
  return value;
}

async function keysCommand(sub: string | undefined, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { merchant: { type: 'string' }, environment: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (!values.merchant || !isUuid(values.merchant)) throw new UsageError(`keys ${sub ?? ''} needs --merchant MERCHANT_ID (a uuid)`);
  const merchantId = values.merchant;
  await withDb(async (db) => {
    if (!(await findMerchant(db, merchantId))) throw new SikaError('NOT_FOUND', `merchant ${merchantId} not found`);
    if (sub === 'list') {
      const environment = environmentOption(values.environment, false);
      const keys = (await Promise.all((environment ? [environment] : ENVIRONMENTS).map((e) => listApiKeys(db, merchantId, e).then((rows) => rows.map((row) => ({ ...row, environment: e })))))).flat();
      if (values.json) console.log(JSON.stringify(keys.map((k) => ({ id: k.id, prefix: k.prefix, environment: k.environment, created_at: k.created_at, last_used_at: k.last_used_at, revoked_at: k.revoked_at, created_by: k.created_by_email }))));
      else for (const k of keys) console.log(`${k.id}  ${k.environment.padEnd(4)}  ${k.prefix}…  created ${k.created_at.toISOString()}  ${k.revoked_at ? `REVOKED ${k.revoked_at.toISOString()}` : `last used ${k.last_used_at?.toISOString() ?? 'never'}`}`);
    } else if (sub === 'create') {
      const environment = environmentOption(values.environment, true)!;
      const key = await createApiKey(db, { merchantId, environment, actor: CLI_ACTOR });
      if (values.json) console.log(JSON.stringify({ id: key.id, prefix: key.prefix, environment, api_key: key.key }));
      else console.log(`API key ${key.id} (${environment}) created:\n  ${key.key}\nIt is shown once; store it now.`);
    } else if (sub === 'revoke') {
      const idOrPrefix = positionals[0];
      if (!idOrPrefix) throw new UsageError('keys revoke needs a KEY_ID or the key prefix');
      const revoked = await revokeMerchantApiKey(db, { merchantId, idOrPrefix, actor: CLI_ACTOR });
      if (!revoked) throw new SikaError('NOT_FOUND', `merchant ${merchantId} has no API key ${idOrPrefix}`);
      console.log(revoked.alreadyRevoked ? `API key ${revoked.prefix}… was already revoked` : `API key ${revoked.prefix}… revoked: every server process refuses it within 1 second`);
    } else {
      throw new UsageError(`unknown command: keys ${sub ?? ''}`);
    }
  });
}

function onOff(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} takes on or off`);
  return value === 'on';
}

function pesewas(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} takes a whole number of pesewas (at least 1)`);
  return Number(value);
}

async function payoutsCommand(sub: string | undefined, args: string[]): Promise<void> {
  if (sub !== 'settings') throw new UsageError(`unknown command: payouts ${sub ?? ''}`);
  const { values } = parseArgs({
    args,
    options: {
      merchant: { type: 'string' },
      environment: { type: 'string' },
      access: { type: 'string' },
      paused: { type: 'string' },
      limit: { type: 'string' },
      'daily-limit': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.merchant || (values.environment !== 'test' && values.environment !== 'live')) throw new UsageError('payouts settings needs --merchant ID and --environment test|live');
  const change = {
    payout_access: onOff('access', values.access),
    paused: onOff('paused', values.paused),
    payout_limit_minor: pesewas('limit', values.limit),
    daily_limit_minor: pesewas('daily-limit', values['daily-limit']),
  };
  await withDb(async (db) => {
    if (!(await merchantIdExists(db, values.merchant!))) throw new SikaError('NOT_FOUND', `merchant ${values.merchant} not found`);
    const settings = await setPayoutAccess(db, values.merchant!, values.environment as 'test' | 'live', change);
    if (values.json) console.log(JSON.stringify(settings));
    else
      console.log(
        `payouts ${settings.environment}: access ${settings.payout_access ? 'on' : 'off'}, ${settings.paused ? 'PAUSED' : 'running'}, ` +
          `limit ${settings.payout_limit_minor} per payout, ${settings.daily_limit_minor} per day (pesewas)`,
      );
  });
}

/** The new password: from standard input (one line), or asked twice on a terminal with nothing echoed. */
async function readNewPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  if (!process.stdin.isTTY) throw new UsageError('no terminal to ask for the password on: pipe it in with --password-stdin');
  // Prompts go to stderr, so stdout stays for results.
  const first = await read({ prompt: 'New password: ', silent: true, output: process.stderr });
  const second = await read({ prompt: 'Again: ', silent: true, output: process.stderr });
  if (first !== second) throw new UsageError('the two passwords differ');
  return first;
}

async function userCommand(sub: string | undefined, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, operator: { type: 'boolean', default: false }, 'password-stdin': { type: 'boolean', default: false } } });
  if (!values.email) throw new UsageError(`user ${sub ?? ''} needs --email`);
  if (sub === 'set-password') {
    // Read before opening storage: the embedded data dir is held for as long as it is open.
    const password = await readNewPassword(values['password-stdin']);
    const problem = passwordProblem(password);
    if (problem) throw new UsageError(problem);
    await withDb(async (db) => {
      const account = await setPassword(db, { kind: values.operator ? 'operator' : 'merchant', email: values.email!, password });
      console.log(`password set for ${account.email}; their sessions are signed out`);
    });
  } else if (sub === 'reset-2fa') {
    if (values.operator) throw new UsageError('operators have no two-factor authentication to reset');
    await withDb(async (db) => {
      const user = await resetSecondFactor(db, values.email!);
      console.log(`two-factor authentication is off for ${user.email}; their sessions are signed out`);
    });
  } else {
    throw new UsageError(`unknown command: user ${sub ?? ''}`);
  }
}

async function operatorCommand(sub: string | undefined, args: string[]): Promise<void> {
  if (sub !== 'create') throw new UsageError(`unknown command: operator ${sub ?? ''}`);
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string', default: 'operator' }, json: { type: 'boolean', default: false } } });
  if (!values.email || !values.password) throw new UsageError('operator create needs --email and --password');
  if (values.role !== 'operator' && values.role !== 'teller') throw new UsageError('--role is operator or teller');
  await withDb(async (db) => {
    const created = await createOperator(db, { email: values.email!, password: values.password!, role: values.role as 'operator' | 'teller' });
    console.log(values.json ? JSON.stringify(created) : `operator ${created.email} (${created.role}) created: sign in at /ops`);
  });
}

export async function run(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    if (command === 'merchant' && sub === 'create') await merchantCreate(rest);
    else if (command === 'migrate') await migrateCommand();
    else if (command === 'events') await eventsCommand(sub, rest);
    else if (command === 'keys') await keysCommand(sub, rest);
    else if (command === 'webhooks') await webhooksCommand(sub, rest);
    else if (command === 'payouts') await payoutsCommand(sub, rest);
    else if (command === 'operator') await operatorCommand(sub, rest);
    else if (command === 'statements') await statementsCommand(sub, rest);
    else if (command === 'user') await userCommand(sub, rest);
    else if (command === 'listen') await listenCommand([sub, ...rest].filter((arg): arg is string => arg !== undefined));
    else if (command === 'trigger') await triggerCommand([sub, ...rest].filter((arg): arg is string => arg !== undefined));
    else if (command === undefined || command === 'help' || command === '--help' || command === '-h') console.log(USAGE);
    else throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      console.error(`sika: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof DataDirInUseError || error instanceof ConfigError || error instanceof SikaError) {
      console.error(`sika: ${error.message}`);
      return 1;
    }
    console.error(`sika: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

process.exitCode = await run(process.argv.slice(2));
