// The commands of `sika` that work on storage: each a CommandSpec (src/cli/common.ts) with its help text,
// options and what it does, writing through a CliIo so that the same code runs in the CLI's own process or,
// sent by the CLI, in the running server (src/cli/forward.ts). The dispatch, --help and the entry are main.ts.
// Every command that changes something writes its audit row, in the change's transaction, with the CLI's
// actor (io.actor: type cli, id user@host of the OS user running sika, also when forwarded).
import { read } from 'read';
import { passwordProblem, resetOperator, resetSecondFactor, setPassword } from '../accounts/console-accounts.ts';
import { createApiKey, revokeMerchantApiKey } from '../accounts/api-keys.ts';
import {
  changeActivation,
  findAccount,
  reinstateMerchant,
  setAccountMailBaseUrl,
  suspendMerchant,
  type Account,
} from '../accounts/activation.ts';
import { ENVIRONMENTS, type Environment } from '../lib/environment.ts';
import { createMerchant, findMerchant, listApiKeys, merchantIdExists } from '../accounts/service.ts';
import { createSignInLinkForEmail, SIGN_IN_LINK_LIFETIME_S, signInLinkUrl } from '../accounts/sign-in-links.ts';
import { isUuid } from '../lib/ids.ts';
import { audit } from '../audit/log.ts';
import type { Db } from '../db/index.ts';
import { migrate } from '../db/migrate.ts';
import { SikaError } from '../lib/errors.ts';
import { listWebhookEndpoints, rotateAnyWebhookSecret } from '../accounts/webhook-endpoints.ts';
import { replayEvent } from '../events/replay.ts';
import * as events from '../events/queries.ts';
import { setPayoutAccess } from '../payouts/settings.ts';
import { createOperator } from '../ops/service.ts';
import { JSON_OPTION, str, UsageError, type CliIo, type CommandSpec } from './common.ts';
import { STATEMENTS_IMPORT } from './statements.ts';

/** `sika events list`: rows shown by default and at most. */
const EVENTS_LIST_ROWS_DEFAULT = 20;
const EVENTS_LIST_ROWS_MAX = 1_000;

const MERCHANT_OPTION = { type: 'string', value: 'ID', description: "the merchant's id (merchant_id)" } as const;
const ENVIRONMENT_OPTION = { type: 'string', value: 'test|live', description: 'which environment' } as const;

function environmentOption(value: string | undefined, required: boolean): Environment | null {
  if (value === undefined && !required) return null;
  if (value !== 'test' && value !== 'live') throw new UsageError('--environment takes test or live');
  return value;
}

function onOff(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} takes on or off`);
  return value === 'on';
}

function pesewas(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1)
    throw new UsageError(`--${name} takes a whole number of pesewas (at least 1)`);
  return Number(value);
}

function parseTime(value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw new UsageError(`not a time: ${value} (use ISO 8601, e.g. 2026-11-22T10:00:00Z)`);
  return date;
}

/** The new password: from standard input (one line), or asked twice on a terminal with nothing echoed. */
export async function readNewPassword(fromStdin: boolean, io: CliIo): Promise<string> {
  if (fromStdin) return (await io.stdin()).replace(/\r?\n$/, '');
  if (!io.stdinIsTerminal)
    throw new UsageError('no terminal to ask for the password on: pipe it in with --password-stdin');
  // Prompts go to stderr, so stdout stays for results.
  const first = await read({ prompt: 'New password: ', silent: true, output: process.stderr });
  const second = await read({ prompt: 'Again: ', silent: true, output: process.stderr });
  if (first !== second) throw new UsageError('the two passwords differ');
  return first;
}

function merchantKeysOf(merchantId: string | undefined, command: string): string {
  if (!merchantId || !isUuid(merchantId))
    throw new UsageError(`${command} needs --merchant MERCHANT_ID (a uuid)`, command);
  return merchantId;
}

/** Runs fn on the storage once the merchant is known to exist (NOT_FOUND otherwise). */
function withMerchant<T>(io: CliIo, merchantId: string, fn: (db: Db) => Promise<T>): Promise<T> {
  return io.withDb(async (db) => {
    if (!(await findMerchant(db, merchantId))) throw new SikaError('NOT_FOUND', `merchant ${merchantId} not found`);
    return fn(db);
  });
}

/** Every command, in the order `sika --help` lists them. */
/** A merchant's account as `sika merchant activate|suspend|reinstate` print it. */
function printAccount(io: CliIo, account: Account, json: unknown, done: string): void {
  if (json) {
    io.out(JSON.stringify(account));
    return;
  }
  io.out(`merchant ${account.id} ${done}`);
  io.out(
    `  activation: ${account.activation.status}; suspended: ${account.suspended ? 'yes' : 'no'}; Live: ${account.live_enabled ? 'enabled' : 'refused'}`,
  );
}

/**
 * `sika merchant activate|suspend|reinstate` (issue 33): the operator vouches for a merchant (any undecided
 * status to approved), or stops and restarts its Live work. Audited with the CLI's actor, announced
 * (account.updated) and e-mailed to the owner, as the console's decisions are (src/accounts/activation.ts).
 */
const MERCHANT_STANDING_COMMANDS = (): CommandSpec[] => [
  {
    name: 'merchant activate',
    synopsis: '--merchant ID [--reason TEXT] [--json]',
    summary: 'Activates a merchant for Live (the operator vouches for it), whatever its application says.',
    options: {
      merchant: MERCHANT_OPTION,
      reason: { type: 'string', value: 'TEXT', description: 'why, for the audit log' },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const merchantId = merchantKeysOf(str(values.merchant), 'merchant activate');
      const account = await withMerchant(io, merchantId, async (db) => {
        setAccountMailBaseUrl((await io.deployment(db)).baseUrl);
        const before = await findAccount(db, merchantId);
        if (before?.activation.status !== 'approved')
          await db.transaction((tx) =>
            changeActivation(tx, { merchantId, to: 'approved', actor: io.actor, reason: str(values.reason) ?? null }),
          );
        return (await findAccount(db, merchantId))!;
      });
      printAccount(io, account, values.json, 'is activated for Live');
    },
  },
  {
    name: 'merchant suspend',
    synopsis: '--merchant ID --reason TEXT [--json]',
    summary: 'Suspends a merchant: every server refuses its new Live work within 1 second; Test keeps working.',
    options: {
      merchant: MERCHANT_OPTION,
      reason: { type: 'string', value: 'TEXT', description: 'why (e-mailed to the owner)' },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const merchantId = merchantKeysOf(str(values.merchant), 'merchant suspend');
      const reason = str(values.reason);
      if (!reason) throw new UsageError('merchant suspend needs --reason TEXT (the owner is told)', 'merchant suspend');
      const account = await withMerchant(io, merchantId, async (db) => {
        setAccountMailBaseUrl((await io.deployment(db)).baseUrl);
        return suspendMerchant(db, merchantId, reason, io.actor);
      });
      printAccount(io, account, values.json, 'is suspended');
    },
  },
  {
    name: 'merchant reinstate',
    synopsis: '--merchant ID [--json]',
    summary: "Lifts a merchant's suspension: Live work is accepted again (once activated).",
    options: { merchant: MERCHANT_OPTION, json: JSON_OPTION },
    async run(values, _positionals, io) {
      const merchantId = merchantKeysOf(str(values.merchant), 'merchant reinstate');
      const account = await withMerchant(io, merchantId, async (db) => {
        setAccountMailBaseUrl((await io.deployment(db)).baseUrl);
        return reinstateMerchant(db, merchantId, io.actor);
      });
      printAccount(io, account, values.json, 'is reinstated');
    },
  },
];

export const COMMANDS: CommandSpec[] = [
  {
    name: 'merchant create',
    synopsis:
      '--name NAME --email EMAIL [--password PW] [--webhook-url URL] [--payout-approval]\n                   [--pending-activation] [--json]',
    summary:
      'Creates a merchant with an owner user, a Test and a Live integration and API key, and, with\n      --webhook-url, a webhook endpoint paired with each key (Live only for an https URL).',
    details:
      'The keys (and webhook secrets) are shown once. Without --password the owner signs in to the dashboard\nafter `sika user set-password`, or with a link from `sika user sign-in-link`. The operator vouches for\nthe merchant: it is activated for Live at once. With --pending-activation it is made as sign-up makes it:\nno Live key (live_api_key null) until its Go-Live application is approved or `sika merchant activate`.',
    options: {
      name: { type: 'string', value: 'NAME', description: "the merchant's name, shown to payers" },
      email: { type: 'string', value: 'EMAIL', description: "the owner's email: their dashboard sign-in" },
      password: { type: 'string', value: 'PW', description: "the owner's dashboard password (at least 10 characters)" },
      'webhook-url': {
        type: 'string',
        value: 'URL',
        description: 'a webhook endpoint for each key (Live needs https)',
      },
      'payout-approval': { type: 'boolean', description: 'Live payouts wait for an approver', default: false },
      'pending-activation': {
        type: 'boolean',
        description: 'not activated for Live: no Live key until approved',
        default: false,
      },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const name = str(values.name);
      const email = str(values.email);
      if (!name || !email) throw new UsageError('merchant create needs --name and --email', 'merchant create');
      const created = await io.withDb(async (db) =>
        createMerchant(
          db,
          {
            name,
            email,
            password: str(values.password) ?? null,
            webhookUrl: str(values['webhook-url']) ?? null,
            payoutApproval: values['payout-approval'] === true,
            pendingActivation: values['pending-activation'] === true,
          },
          // The rule the server delivers by, so an endpoint it would never deliver to is refused now.
          { allowPrivateTargets: (await io.deployment(db)).webhookAllowPrivateTargets },
          io.actor,
        ),
      );
      for (const warning of created.warnings) io.err(`warning: ${warning}`);
      const output = {
        merchant_id: created.merchant_id,
        test_api_key: created.test_api_key,
        live_api_key: created.live_api_key,
        test_webhook_secret: created.test_webhook_secret,
        live_webhook_secret: created.live_webhook_secret,
      };
      if (values.json) {
        io.out(JSON.stringify(output));
      } else {
        io.out(`merchant ${output.merchant_id} created`);
        io.out(`  Test API key: ${output.test_api_key}`);
        io.out(
          `  Live API key: ${output.live_api_key ?? 'none until the merchant is activated (sika merchant activate)'}`,
        );
        if (output.test_webhook_secret) io.out(`  Test webhook secret: ${output.test_webhook_secret}`);
        if (output.live_webhook_secret) io.out(`  Live webhook secret: ${output.live_webhook_secret}`);
        io.out('The keys are shown once; store them now.');
      }
    },
  },
  ...MERCHANT_STANDING_COMMANDS(),
  {
    name: 'migrate',
    synopsis: '',
    summary: 'Applies pending database migrations (the server also does this at start).',
    options: {},
    async run(_values, _positionals, io) {
      const applied = await io.withDb(
        (db) =>
          migrate(db, {
            onApplied: (tx, names) =>
              audit(tx, {
                actor: io.actor,
                merchantId: null,
                action: 'schema.migrate',
                objectType: 'schema',
                objectId: names.at(-1)!,
                before: null,
                after: { applied: names },
              }),
          }),
        { migrate: false },
      );
      io.out(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply: the schema is up to date');
    },
  },
  {
    name: 'events list',
    synopsis: '[--merchant ID] [--limit N] [--json]',
    summary: 'Recent events with the state of their webhook deliveries.',
    options: {
      merchant: { ...MERCHANT_OPTION, description: "only this merchant's events" },
      limit: {
        type: 'string',
        value: 'N',
        description: `how many, newest first (default ${EVENTS_LIST_ROWS_DEFAULT}, at most ${EVENTS_LIST_ROWS_MAX})`,
        default: String(EVENTS_LIST_ROWS_DEFAULT),
      },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > EVENTS_LIST_ROWS_MAX)
        throw new UsageError(`--limit must be 1 to ${EVENTS_LIST_ROWS_MAX}`, 'events list');
      const rows = await io.withDb((db) => events.listEvents(db, { merchantId: str(values.merchant) ?? null, limit }));
      if (values.json) io.out(JSON.stringify(rows));
      else
        for (const row of rows)
          io.out(
            `${row.created_at.toISOString()}  ${row.id}  ${row.type.padEnd(30)} ${row.object_id}  ${row.deliveries ?? 'no endpoint'}`,
          );
    },
  },
  {
    name: 'events show',
    synopsis: 'EVENT_ID',
    summary: "The event's payload and every delivery try (time, HTTP status, latency, error, response excerpt).",
    options: {},
    positionals: 1,
    async run(_values, positionals, io) {
      const id = positionals[0];
      if (!id) throw new UsageError('events show needs an EVENT_ID (sika events list shows them)', 'events show');
      await io.withDb(async (db) => {
        const payload = await events.findEventPayload(db, id);
        if (payload === null) throw new SikaError('NOT_FOUND', `event ${id} not found`);
        io.out(payload);
        for (const t of await events.listTries(db, id)) {
          io.out(
            `try ${t.try_number}  ${t.tried_at.toISOString()}  ${t.url}  ${t.http_status ?? '-'}  ${t.latency_ms} ms  ${t.error ?? ''}  ${(t.response_excerpt ?? '').slice(0, 120).replace(/\s+/g, ' ')}`,
          );
        }
      });
    },
  },
  {
    name: 'events replay',
    synopsis: 'EVENT_ID | --failed-since ISO_TIME [--merchant ID]',
    summary: 'Sends an event again (same event id), or every event whose delivery failed since a time.',
    details: "The server's delivery worker sends them.",
    options: {
      'failed-since': {
        type: 'string',
        value: 'ISO_TIME',
        description: 'every event whose delivery failed since then (e.g. 2026-11-22T00:00:00Z)',
      },
      merchant: { ...MERCHANT_OPTION, description: "with --failed-since: only this merchant's events" },
    },
    positionals: 1,
    async run(values, positionals, io) {
      const since = str(values['failed-since']);
      if (!since && positionals.length === 0)
        throw new UsageError('events replay needs an EVENT_ID or --failed-since', 'events replay');
      const sinceTime = since ? parseTime(since) : null;
      await io.withDb(async (db) => {
        const ids = sinceTime
          ? (await events.failedEventIdsSince(db, sinceTime, str(values.merchant) ?? null)).map((r) => r.event_id)
          : positionals.slice(0, 1);
        for (const id of ids) {
          const queued = await replayEvent(db, id, io.actor);
          if (queued < 0) throw new SikaError('NOT_FOUND', `event ${id} not found`);
          io.out(`${id}: ${queued} deliver${queued === 1 ? 'y' : 'ies'} queued`);
        }
        if (since) io.out(`${ids.length} event(s) replayed; the server's delivery worker sends them`);
      });
    },
  },
  {
    name: 'user set-password',
    synopsis: '--email EMAIL [--operator] [--password-stdin]',
    summary:
      "Sets a dashboard user's (or with --operator an operator's) password: asked for twice on the\n      terminal without echo, or read from standard input. Signs out all their sessions and clears\n      their sign-in backoff. A merchant created without --password can sign in after this.",
    options: {
      email: { type: 'string', value: 'EMAIL', description: 'whose password' },
      operator: {
        type: 'boolean',
        description: "an operator's (the console at /ops), not a dashboard user's",
        default: false,
      },
      'password-stdin': {
        type: 'boolean',
        description: 'read the password from standard input (one line)',
        default: false,
      },
    },
    async run(values, _positionals, io) {
      const email = str(values.email);
      if (!email) throw new UsageError('user set-password needs --email', 'user set-password');
      // Read before opening storage: the embedded data dir is held for as long as it is open.
      const password = await readNewPassword(values['password-stdin'] === true, io);
      const problem = passwordProblem(password);
      if (problem) throw new UsageError(problem);
      const account = await io.withDb((db) =>
        setPassword(db, { kind: values.operator ? 'operator' : 'merchant', email, password, actor: io.actor }),
      );
      io.out(`password set for ${account.email}; their sessions are signed out`);
    },
  },
  {
    name: 'user reset-2fa',
    synopsis: '--email EMAIL',
    summary:
      "Turns off a dashboard user's two-factor authentication (phone and recovery codes lost) and\n      signs out their sessions; if the owner requires it, they set it up again at their next sign-in.",
    options: {
      email: { type: 'string', value: 'EMAIL', description: 'whose second factor' },
      operator: { type: 'boolean', description: '(an operator: use sika operator reset)', default: false },
    },
    async run(values, _positionals, io) {
      const email = str(values.email);
      if (!email) throw new UsageError('user reset-2fa needs --email', 'user reset-2fa');
      if (values.operator)
        throw new UsageError(
          'an operator is reset with sika operator reset --email EMAIL (a temporary password, and their second factor cleared)',
          'operator reset',
        );
      const user = await io.withDb((db) => resetSecondFactor(db, io.actor, email));
      io.out(`two-factor authentication is off for ${user.email}; their sessions are signed out`);
    },
  },
  {
    name: 'user sign-in-link',
    synopsis: '--email EMAIL [--send] [--json]',
    summary: `A one-time dashboard sign-in link for a user (valid ${SIGN_IN_LINK_LIFETIME_S / 60} minutes, signs in once), e.g. for a
      merchant created without a password. A second factor, when on, is still asked for. With --send the link is
      e-mailed to the user (through the mail outbox; without SMTP_URL it is written to the server's log and the
      operator console's Mail page) and not printed.`,
    options: {
      email: { type: 'string', value: 'EMAIL', description: 'the dashboard user' },
      send: { type: 'boolean', description: 'e-mail the link to the user instead of printing it' },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const email = str(values.email);
      if (!email) throw new UsageError('user sign-in-link needs --email', 'user sign-in-link');
      const { link, baseUrl } = await io.withDb(async (db) => {
        const baseUrl = (await io.deployment(db)).baseUrl;
        return {
          link: await createSignInLinkForEmail(db, email, io.actor, values.send ? { mailBaseUrl: baseUrl } : {}),
          baseUrl,
        };
      });
      if (link.mailId) {
        if (values.json)
          io.out(JSON.stringify({ email: link.email, mail_id: link.mailId, expires_in_s: SIGN_IN_LINK_LIFETIME_S }));
        else
          io.out(
            `a sign-in link is e-mailed to ${link.email} (mail ${link.mailId}); it signs them in once, within ${SIGN_IN_LINK_LIFETIME_S / 60} minutes`,
          );
        return;
      }
      const url = signInLinkUrl(baseUrl, link.token);
      if (values.json) io.out(JSON.stringify({ email: link.email, url, expires_in_s: SIGN_IN_LINK_LIFETIME_S }));
      else
        io.out(
          `${url}\n  signs ${link.email} in to the dashboard once, within ${SIGN_IN_LINK_LIFETIME_S / 60} minutes`,
        );
    },
  },
  {
    name: 'operator create',
    synopsis: '--email EMAIL --password PW [--role operator|teller] [--json]',
    summary: 'Creates an operator account for the console at /ops (tellers record cash deposits).',
    options: {
      email: { type: 'string', value: 'EMAIL', description: "the operator's sign-in" },
      password: { type: 'string', value: 'PW', description: 'their password (at least 10 characters)' },
      role: {
        type: 'string',
        value: 'ROLE',
        description: 'operator (default), teller or compliance (decides Go-Live applications)',
        default: 'operator',
      },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const email = str(values.email);
      const password = str(values.password);
      if (!email || !password) throw new UsageError('operator create needs --email and --password', 'operator create');
      if (values.role !== 'operator' && values.role !== 'teller' && values.role !== 'compliance')
        throw new UsageError('--role is operator, teller or compliance', 'operator create');
      const role = values.role;
      const created = await io.withDb((db) => createOperator(db, { email, password, role }, io.actor));
      io.out(
        values.json
          ? JSON.stringify(created)
          : `operator ${created.email} (${created.role}) created: sign in at /ops (they set up two-factor authentication at their first sign-in)`,
      );
    },
  },
  {
    name: 'operator reset',
    synopsis: '--email EMAIL [--json]',
    summary:
      'Resets a locked-out operator (lost phone, forgotten password): a temporary password, shown once,\n      that must be changed at their next sign-in; their two-factor authentication is cleared (they set\n      it up again), their sessions signed out. Another operator can do the same on the Operators page.',
    options: { email: { type: 'string', value: 'EMAIL', description: "the operator's sign-in" }, json: JSON_OPTION },
    async run(values, _positionals, io) {
      const email = str(values.email);
      if (!email) throw new UsageError('operator reset needs --email', 'operator reset');
      const reset = await io.withDb((db) => resetOperator(db, io.actor, { email }));
      if (values.json)
        io.out(
          JSON.stringify({ operator_id: reset.id, email: reset.email, temporary_password: reset.temporaryPassword }),
        );
      else {
        io.out(`operator ${reset.email} reset: sessions signed out, two-factor authentication cleared`);
        io.out(`  temporary password: ${reset.temporaryPassword}`);
        io.out(
          'It is shown once. They sign in at /ops with it, choose their own password, then set up two-factor authentication.',
        );
      }
    },
  },
  {
    name: 'payouts settings',
    synopsis:
      '--merchant ID --environment test|live [--access on|off] [--paused on|off]\n                   [--limit PESEWAS] [--daily-limit PESEWAS] [--json]',
    summary:
      'Shows, or as an operator changes, payout access, pause and limits (payout access is off in Live\n      until turned on here).',
    options: {
      merchant: MERCHANT_OPTION,
      environment: ENVIRONMENT_OPTION,
      access: { type: 'string', value: 'on|off', description: 'payout access' },
      paused: { type: 'string', value: 'on|off', description: 'pause or resume payouts' },
      limit: { type: 'string', value: 'PESEWAS', description: 'the largest payout' },
      'daily-limit': { type: 'string', value: 'PESEWAS', description: 'the most paid out per day' },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const merchantId = str(values.merchant);
      const environment = str(values.environment);
      if (!merchantId || (environment !== 'test' && environment !== 'live'))
        throw new UsageError('payouts settings needs --merchant ID and --environment test|live', 'payouts settings');
      const change = {
        payout_access: onOff('access', str(values.access)),
        paused: onOff('paused', str(values.paused)),
        payout_limit_minor: pesewas('limit', str(values.limit)),
        daily_limit_minor: pesewas('daily-limit', str(values['daily-limit'])),
      };
      const settings = await io.withDb(async (db) => {
        if (!(await merchantIdExists(db, merchantId)))
          throw new SikaError('NOT_FOUND', `merchant ${merchantId} not found`);
        // Only a change is audited: without --access, --paused or a limit the command shows the settings.
        return setPayoutAccess(
          db,
          merchantId,
          environment,
          change,
          Object.values(change).some((v) => v !== undefined) ? io.actor : null,
        );
      });
      if (values.json) io.out(JSON.stringify(settings));
      else
        io.out(
          `payouts ${settings.environment}: access ${settings.payout_access ? 'on' : 'off'}, ${settings.paused ? 'PAUSED' : 'running'}, ` +
            `limit ${settings.payout_limit_minor} per payout, ${settings.daily_limit_minor} per day (pesewas)`,
        );
    },
  },
  {
    name: 'keys list',
    synopsis: '--merchant ID [--environment test|live] [--json]',
    summary: "The merchant's API keys (prefix, environment, created, last used, revoked); never the secret.",
    options: {
      merchant: MERCHANT_OPTION,
      environment: { ...ENVIRONMENT_OPTION, description: 'only this environment' },
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const merchantId = merchantKeysOf(str(values.merchant), 'keys list');
      const environment = environmentOption(str(values.environment), false);
      const keys = await withMerchant(io, merchantId, async (db) =>
        (
          await Promise.all(
            (environment ? [environment] : ENVIRONMENTS).map((e) =>
              listApiKeys(db, merchantId, e).then((rows) => rows.map((row) => ({ ...row, environment: e }))),
            ),
          )
        ).flat(),
      );
      if (values.json)
        io.out(
          JSON.stringify(
            keys.map((k) => ({
              id: k.id,
              prefix: k.prefix,
              environment: k.environment,
              created_at: k.created_at,
              last_used_at: k.last_used_at,
              revoked_at: k.revoked_at,
              created_by: k.created_by_email,
            })),
          ),
        );
      else
        for (const k of keys)
          io.out(
            `${k.id}  ${k.environment.padEnd(4)}  ${k.prefix}…  created ${k.created_at.toISOString()}  ${k.revoked_at ? `REVOKED ${k.revoked_at.toISOString()}` : `last used ${k.last_used_at?.toISOString() ?? 'never'}`}`,
          );
    },
  },
  {
    name: 'keys create',
    synopsis: '--merchant ID --environment test|live [--json]',
    summary: "A new API key (shown once), created on behalf of the merchant's owner.",
    options: {
      merchant: MERCHANT_OPTION,
      environment: ENVIRONMENT_OPTION,
      json: JSON_OPTION,
    },
    async run(values, _positionals, io) {
      const merchantId = merchantKeysOf(str(values.merchant), 'keys create');
      const environment = environmentOption(str(values.environment), true)!;
      const key = await withMerchant(io, merchantId, (db) =>
        createApiKey(db, { merchantId, environment, actor: io.actor }),
      );
      if (values.json) io.out(JSON.stringify({ id: key.id, prefix: key.prefix, environment, api_key: key.key }));
      else io.out(`API key ${key.id} (${environment}) created:\n  ${key.key}\nIt is shown once; store it now.`);
    },
  },
  {
    name: 'keys revoke',
    synopsis: 'KEY_ID|PREFIX --merchant ID',
    summary: 'Revokes a key: every server process refuses it within 1 second.',
    options: { merchant: MERCHANT_OPTION },
    positionals: 1,
    async run(values, positionals, io) {
      const merchantId = merchantKeysOf(str(values.merchant), 'keys revoke');
      const idOrPrefix = positionals[0];
      if (!idOrPrefix)
        throw new UsageError('keys revoke needs a KEY_ID or the key prefix (sika keys list shows them)', 'keys revoke');
      const revoked = await withMerchant(io, merchantId, (db) =>
        revokeMerchantApiKey(db, { merchantId, idOrPrefix, actor: io.actor }),
      );
      if (!revoked) throw new SikaError('NOT_FOUND', `merchant ${merchantId} has no API key ${idOrPrefix}`);
      io.out(
        revoked.alreadyRevoked
          ? `API key ${revoked.prefix}… was already revoked`
          : `API key ${revoked.prefix}… revoked: every server process refuses it within 1 second`,
      );
    },
  },
  {
    name: 'webhooks list',
    synopsis: '--merchant ID',
    summary: "The merchant's webhook endpoints: id, environment, status, URL.",
    options: { merchant: MERCHANT_OPTION },
    async run(values, _positionals, io) {
      const merchantId = str(values.merchant);
      if (!merchantId) throw new UsageError('webhooks list needs --merchant', 'webhooks list');
      const endpoints = await io.withDb((db) => listWebhookEndpoints(db, merchantId));
      for (const e of endpoints)
        io.out(
          `${e.id}  ${e.environment}  ${e.status}  ${e.url}${e.disabled_reason ? `  (${e.disabled_reason})` : ''}`,
        );
    },
  },
  {
    name: 'webhooks rotate-secret',
    synopsis: 'ENDPOINT_ID [--overlap-hours H]',
    summary: 'A new signing secret; the old one keeps signing too for H hours (default 24).',
    options: {
      'overlap-hours': {
        type: 'string',
        value: 'H',
        description: 'hours the old secret keeps signing (default 24)',
        default: '24',
      },
    },
    positionals: 1,
    async run(values, positionals, io) {
      const id = positionals[0];
      if (!id)
        throw new UsageError(
          'webhooks rotate-secret needs an ENDPOINT_ID (sika webhooks list shows them)',
          'webhooks rotate-secret',
        );
      const hours = Number(values['overlap-hours']);
      if (!Number.isFinite(hours) || hours < 0)
        throw new UsageError('--overlap-hours takes a number of hours (0 or more)', 'webhooks rotate-secret');
      const rotated = await io.withDb((db) => rotateAnyWebhookSecret(db, id, Math.round(hours * 3_600), io.actor));
      io.out(JSON.stringify(rotated));
    },
  },
  STATEMENTS_IMPORT,
];
