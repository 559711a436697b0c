// The sika command. Works against the configured storage (DATABASE_URL, else DATA_DIR).
import { parseArgs } from 'node:util';
import { createMerchant } from '../accounts/service.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openDb } from '../db/index.ts';
import { DataDirInUseError } from '../db/embedded.ts';
import { migrate } from '../db/migrate.ts';
import { AppError } from '../http/errors.ts';

const USAGE = `usage: sika <command> [options]

commands:
  merchant create --name NAME --email EMAIL [--password PW] [--webhook-url URL] [--payout-approval] [--json]
      Creates a merchant with an owner user, a Test and a Live integration and API key, and, with
      --webhook-url, a webhook endpoint paired with each key (Live only for an https URL).
  migrate
      Applies pending database migrations (the server also does this at start).

Storage: PostgreSQL when DATABASE_URL is set, else the embedded data dir DATA_DIR (default ./.sika),
which one process may use at a time: stop the server before running a command against it.`;

class UsageError extends Error {}

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
  const db = await openDb(loadConfig());
  try {
    const created = await createMerchant(db, {
      name: values.name,
      email: values.email,
      password: values.password ?? null,
      webhookUrl: values['webhook-url'] ?? null,
      payoutApproval: values['payout-approval'],
    });
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

export async function run(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    if (command === 'merchant' && sub === 'create') await merchantCreate(rest);
    else if (command === 'migrate') await migrateCommand();
    else if (command === undefined || command === 'help' || command === '--help' || command === '-h') console.log(USAGE);
    else throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      console.error(`sika: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof DataDirInUseError || error instanceof ConfigError || error instanceof AppError) {
      console.error(`sika: ${error.message}`);
      return 1;
    }
    console.error(`sika: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

process.exitCode = await run(process.argv.slice(2));
