// Issue 29: the served API document lints clean with redocly's recommended rules (the installed
// @redocly/cli, no config: its built-in recommended set), 0 errors and 0 warnings. The only exceptions are
// the three ambiguous-path pairs SPEC 4.3 fixes, recorded in .redocly.lint-ignore.yaml; the router resolves
// them (proved below), and any other problem, a new ambiguity included, fails here.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { fund, merchantWithHooks } from '../support/payouts-fixtures.ts';

const REDOCLY_CLI = resolve('node_modules/@redocly/cli/bin/cli.js');
const IGNORE_FILE = resolve('.redocly.lint-ignore.yaml');
/** The pairs no-ambiguous-paths reports (at the later path of each), and nothing else may be ignored. */
const KNOWN_AMBIGUOUS = ['cancel', 'receipt', 'evidence'].map(
  (tail) => `#/paths/~1api~1v1~1payouts~1{payout_id}~1${tail}`,
);

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}
interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: LintProblem[];
}

/** Runs `redocly lint openapi.json --format=json` in a directory holding the document (and the ignore file when given). */
async function lint(document: unknown, withIgnoreFile: boolean): Promise<LintReport> {
  const dir = mkdtempSync(join(tmpdir(), 'sika-redocly-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document, null, 2));
    if (withIgnoreFile) copyFileSync(IGNORE_FILE, join(dir, '.redocly.lint-ignore.yaml'));
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    // lint exits 1 when it reports an error: the report on stdout is what the test reads either way.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [REDOCLY_CLI, 'lint', 'openapi.json', '--format=json'],
      { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      if (!error.stdout) throw new Error(`redocly lint failed: ${error.stderr}`);
      return { stdout: error.stdout };
    });
    return JSON.parse(stdout) as LintReport;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const describeProblems = (report: LintReport) =>
  report.problems
    .map((problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`)
    .join('\n');

describe(`OpenAPI document lint, redocly recommended (${storageKind})`, () => {
  let t: TestContext;
  let baseUrl: string;
  let document: Record<string, unknown>;

  before(async () => {
    t = await startTestApp();
    baseUrl = await t.listen();
    const response = await fetch(`${baseUrl}/openapi.json`);
    assert.equal(response.status, 200);
    document = (await response.json()) as Record<string, unknown>;
  });
  after(() => t.close());

  it('has 0 errors and 0 warnings, ignoring only the known ambiguous payout paths', async () => {
    const report = await lint(document, true);
    assert.equal(report.totals.errors, 0, describeProblems(report));
    assert.equal(report.totals.warnings, 0, describeProblems(report));
    assert.equal(report.totals.ignored, KNOWN_AMBIGUOUS.length);
    // The ignore file holds those entries and nothing else.
    const entries = readFileSync(IGNORE_FILE, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
    assert.deepEqual(entries, [
      'openapi.json:',
      '  no-ambiguous-paths:',
      ...KNOWN_AMBIGUOUS.map((pointer) => `    - '${pointer}'`),
    ]);
  });

  it('fails on a warning: an operation without an operationId is reported', async () => {
    const broken = structuredClone(document) as { paths: Record<string, Record<string, { operationId?: string }>> };
    delete broken.paths['/api/v1/sessions']!.get!.operationId;
    const report = await lint(broken, true);
    assert.equal(report.totals.errors, 0);
    assert.equal(report.totals.warnings, 1, describeProblems(report));
    assert.equal(report.problems[0]?.ruleId, 'operation-operationId');
  });

  it('fails on a new ambiguous path, and reports the known pairs without the ignore file', async () => {
    const broken = structuredClone(document) as { paths: Record<string, unknown> };
    broken.paths['/api/v1/payouts/{payout_id}/archive'] = broken.paths['/api/v1/payouts/{payout_id}/cancel'];
    const withNew = await lint(broken, true);
    assert.ok(
      withNew.problems.some(
        (problem) => problem.ruleId === 'no-ambiguous-paths' && problem.location[0]!.pointer.endsWith('archive'),
      ),
      describeProblems(withNew),
    );
    // Without the ignore file, exactly the known pairs come back (the report leaves ignored problems out).
    const bare = await lint(document, false);
    assert.equal(bare.totals.errors, 0, describeProblems(bare));
    assert.deepEqual(
      bare.problems.map((problem) => `${problem.ruleId} ${problem.location[0]!.pointer}`).sort(),
      KNOWN_AMBIGUOUS.map((pointer) => `no-ambiguous-paths ${pointer}`).sort(),
    );
    for (const problem of bare.problems)
      assert.match(
        problem.message,
        /`\/api\/v1\/payouts\/recipients\/\{recipient_id\}` and `\/api\/v1\/payouts\/\{payout_id\}\/(cancel|receipt|evidence)`/,
      );
  });

  it('routes the ambiguous pairs by their static segment: `recipients` never names a payout', async () => {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 100_000);
    const headers = { authorization: `Bearer ${m.test_api_key}`, 'content-type': 'application/json' };
    const post = (path: string, body: unknown) =>
      fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const get = (path: string) => fetch(`${baseUrl}${path}`, { headers });

    const recipient = (await (
      await post('/api/v1/payouts/recipients', {
        account_type: 'momo',
        network: 'mtn',
        phone: '0241234567',
        account_name: 'Kofi Boateng',
      })
    ).json()) as { id: string };
    const created = await post('/api/v1/payouts', {
      recipient_id: recipient.id,
      amount_minor: 1000,
      client_reference: 'lint-route-1',
      test_outcome: 'processing',
    });
    assert.equal(created.status, 201);
    const payout = (await created.json()) as { id: string; status: string };
    assert.match(payout.id, /^po_/);

    // The recipient's path answers the recipient; the payout's paths answer the payout.
    const gotRecipient = await get(`/api/v1/payouts/recipients/${recipient.id}`);
    assert.equal(gotRecipient.status, 200);
    assert.equal(((await gotRecipient.json()) as { id: string }).id, recipient.id);
    const gotPayout = await get(`/api/v1/payouts/${payout.id}`);
    assert.equal(((await gotPayout.json()) as { id: string }).id, payout.id);

    // recipients/{receipt,evidence,cancel}: what both templates fit is a recipient (GET) or no payout (POST).
    for (const tail of ['receipt', 'evidence', 'cancel']) {
      const asRecipient = await get(`/api/v1/payouts/recipients/${tail}`);
      assert.equal(asRecipient.status, 404, tail);
      assert.match(((await asRecipient.json()) as { error: { message: string } }).error.message, /recipient/i, tail);
    }
    const cancel = await post('/api/v1/payouts/recipients/cancel', {});
    assert.equal(cancel.status, 404);
    assert.equal(((await cancel.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
    const evidence = await get('/api/v1/payouts/recipients/evidence/evd_1');
    assert.equal(evidence.status, 404);
    // The real payout was not touched by any of them.
    const after = (await (await get(`/api/v1/payouts/${payout.id}`)).json()) as { status: string };
    assert.equal(after.status, payout.status);
  });
});
