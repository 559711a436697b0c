// `sika statements import` (issue 16, docs/bank-statements.md): a statement file imported from the command line,
// its counts, a second import refused unless forced, --columns, --json, --help and usage errors.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import { loadConfig } from '../../src/config/index.ts';
import { openDb } from '../../src/db/index.ts';
import { buildApp } from '../../src/app.ts';
import type { ImportResult } from '../../src/statements/service.ts';
import {
  BANK_ENV,
  attemptOf,
  gcbStatement,
  liveTransfer,
  sessionStatus,
  uniqueWords,
} from '../support/bank-statements.ts';
import { CLI_USER_AT_HOST } from '../support/cli-io.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { seededDataDir } from '../support/embedded-template.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI_TIMEOUT_MS = 120_000;

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sika.mjs', ...args],
      { cwd: ROOT, env, timeout: CLI_TIMEOUT_MS },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe(`sika statements import (${storageKind})`, () => {
  let dataDir: string | null = null;
  let workDir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dataDir = process.env.DATABASE_URL ? null : await seededDataDir('sika-statements-cli-');
    workDir = mkdtempSync(join(tmpdir(), 'sika-statements-files-'));
    env = {
      ...process.env,
      LOG_LEVEL: 'silent',
      ...BANK_ENV,
      ...(dataDir ? { DATA_DIR: dataDir, DATABASE_URL: '' } : {}),
    };
  });
  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  });

  /** The app on the CLI's storage, open only while fn runs (one process at a time holds an embedded data dir). */
  async function withApp<T>(fn: (t: TestContext) => Promise<T>): Promise<T> {
    const db = await openDb({ databaseUrl: process.env.DATABASE_URL || null, dataDir });
    const config = loadConfig({
      ...process.env,
      ...BANK_ENV,
      LOG_LEVEL: 'silent',
      WORKERS: 'off',
      BASE_URL: 'http://sika.test',
      REDIS_URL: '',
    });
    const app = await buildApp({ config, db, logger: false });
    await app.ready();
    const t = { app, db, config } as TestContext;
    t.merchant = () =>
      createMerchant(db, { name: 'CLI Statements Ltd', email: `cli-${randomUUID()}@example.com`, webhookUrl: null });
    try {
      return await fn(t);
    } finally {
      await app.close();
      await db.close();
    }
  }

  it('imports a statement file and prints the counts; the same file again is refused, and with --force-reason all duplicates; --json gives the result', async () => {
    const transfer = await withApp(async (t) => liveTransfer(t, await t.merchant(), 20_000));
    const file = join(workDir, 'gcb-march.csv');
    writeFileSync(
      file,
      gcbStatement([
        { narration: `TRF ${transfer.reference}`, credit: '200.00' },
        { narration: `NO REFERENCE ${uniqueWords()}`, credit: '3.00' },
        { narration: 'CHARGES', debit: '1.00' },
        { narration: 'BROKEN', credit: 'abc' },
      ]),
    );
    const first = await runCli(['statements', 'import', file, '--bank', 'GCB'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^imported gcb-march\.csv \(GCB\): 4 lines, 2 credits, 1 debit left out$/m);
    assert.match(first.stdout, /^ {2}matched +1$/m);
    assert.match(first.stdout, /^ {2}amount mismatch +0$/m);
    assert.match(first.stdout, /^ {2}unmatched +1 +\(in the unmatched queue at \/ops\/statements\)$/m);
    assert.match(first.stdout, /^ {2}duplicates +0$/m);
    assert.match(first.stdout, /^ {2}errors +1$/m);
    assert.match(first.stdout, /^line 9: credit "abc" is not an amount$/m);
    await withApp(async (t) => {
      assert.equal((await attemptOf(t, transfer.attemptId)).status, 'paid');
      assert.equal(await sessionStatus(t, transfer.sessionId), 'success');
      const [audited] = await t.db.query<{ actor_id: string }>(
        "SELECT actor_id FROM audit_log WHERE action = 'statement.import' ORDER BY id DESC LIMIT 1",
      );
      assert.equal(audited!.actor_id, CLI_USER_AT_HOST, 'the CLI user@host');
    });
    const refused = await runCli(['statements', 'import', file, '--bank', 'gcb', '--json'], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /This file was imported already: gcb-march\.csv for GCB on /);
    const again = await runCli(
      ['statements', 'import', file, '--bank', 'gcb', '--json', '--force-reason', 'The bank sent it twice'],
      env,
    );
    assert.equal(again.code, 0, again.stderr);
    const result = JSON.parse(again.stdout) as ImportResult;
    assert.deepEqual(
      [result.credits, result.duplicates, result.matched, result.unmatched, result.errors],
      [2, 2, 0, 0, 1],
    );
  });

  it('takes --columns for headers it does not know', async () => {
    const transfer = await withApp(async (t) => liveTransfer(t, await t.merchant(), 21_000));
    const file = join(workDir, 'odd.csv');
    writeFileSync(file, `When,What,Got\n12/03/2026,${transfer.reference} ${uniqueWords()},210.00\n`);
    const refused = await runCli(['statements', 'import', file, '--bank', 'GCB'], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /No header row found/);
    const mapped = await runCli(
      ['statements', 'import', file, '--bank', 'GCB', '--columns', 'date=When,description=What,credit=Got'],
      env,
    );
    assert.equal(mapped.code, 0, mapped.stderr);
    assert.match(mapped.stdout, /^ {2}matched +1$/m);
  });

  it('--help explains the command; a missing --bank or file is a usage error; an unreadable file or unknown bank is refused', async () => {
    for (const args of [['statements', '--help'], ['statements', 'import', '--help'], ['statements']]) {
      const help = await runCli(args, env);
      assert.equal(help.code, 0, help.stderr);
      assert.match(
        help.stdout,
        /usage: sika statements import FILE --bank CODE \[--columns MAPPING\] \[--force-reason TEXT\] \[--json\]/,
      );
      assert.match(help.stdout, /date=Txn Date,credit=Amount In,description=Details/);
    }
    const general = await runCli(['--help'], env);
    assert.match(general.stdout, /statements import FILE --bank CODE/);
    const noBank = await runCli(['statements', 'import', join(workDir, 'x.csv')], env);
    assert.equal(noBank.code, 2);
    assert.match(noBank.stderr, /needs --bank CODE/);
    const noFile = await runCli(['statements', 'import', '--bank', 'GCB'], env);
    assert.equal(noFile.code, 2);
    const missing = await runCli(['statements', 'import', join(workDir, 'missing.csv'), '--bank', 'GCB'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read .*missing\.csv \(ENOENT\)/);
    const file = join(workDir, 'any.csv');
    writeFileSync(file, 'Date,Narration,Credit\n12/03/2026,X,1.00\n');
    const unknown = await runCli(['statements', 'import', file, '--bank', 'NOPE'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /"NOPE" is not the code of a bank/);
  });
});
