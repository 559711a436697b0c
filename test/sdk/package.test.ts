// @sika/node as a merchant gets it: packages/node built (the OpenAPI document from the server's code,
// types, ESM + CJS bundles, .d.ts and .d.cts; what npm pack's prepack runs) and packed, the tarball installed
// into a scratch project outside this repository, then, with plain `node` against this server on
// 127.0.0.1: a session, its payment through the Test simulator, a recipient and a payout, a webhook
// signed by the server's signing verified (ESM and require()) and a forged one refused. The scratch
// project also type-checks a TypeScript file and the README examples that import '@sika/node' against
// the tarball's declarations, with tsc strict.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { signatureHeader } from '../../src/events/signing.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { fundThroughCheckout } from '../support/payouts-fixtures.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const PACKAGE_DIR = join(ROOT, 'packages', 'node');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const NPM_TIMEOUT_MS = 120_000;
const README_FILES = [join(ROOT, 'README.md'), join(PACKAGE_DIR, 'README.md')];

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    timeout: NPM_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** `node <file>` in the scratch project; its stdout parsed as JSON. */
async function node(file: string, cwd: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [file], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function tsc(cwd: string, files: string[]): Promise<void> {
  writeFileSync(
    join(cwd, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        allowJs: true,
        checkJs: true,
        skipLibCheck: false,
        // @types/node from this checkout, so the scratch project installs no more than the tarball needs.
        typeRoots: [join(ROOT, 'node_modules', '@types'), join(cwd, 'node_modules', '@types')],
        types: ['node'],
      },
      files,
    }),
  );
  try {
    await run(process.execPath, [TSC, '-p', join(cwd, 'tsconfig.json')], { cwd, timeout: 60_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    assert.fail(`tsc found errors:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** The ```ts / ```js blocks of a Markdown file that import '@sika/node'. */
export function sdkExamples(markdown: string): { lang: string; code: string; line: number }[] {
  const blocks: { lang: string; code: string; line: number }[] = [];
  const pattern = /^```(ts|typescript|js|javascript)[^\n]*\n([\s\S]*?)^```/gm;
  for (const match of markdown.matchAll(pattern)) {
    if (!/from\s+['"]@sika\/node['"]|require\(['"]@sika\/node['"]\)/.test(match[2]!)) continue;
    blocks.push({ lang: match[1]!, code: match[2]!, line: markdown.slice(0, match.index).split('\n').length });
  }
  return blocks;
}

const FLOW_SCRIPT = `
import { Sika, SikaError } from '@sika/node';

const { BASE_URL, API_KEY, INVOICE_REF } = process.env;
const sika = new Sika({ apiKey: API_KEY, baseUrl: BASE_URL });
let step = 'start';
process.on('uncaughtException', (error) => {
  console.error('failed at ' + step + ': ' + error.stack);
  process.exit(1);
});

step = 'sika.sessions.create';
const session = await sika.sessions.create({ amount_minor: 100000, invoice_ref: INVOICE_REF });
step = 'sika.sessions.create with a key';
const replayed = await sika.sessions.create({ amount_minor: 100000, invoice_ref: INVOICE_REF }, { idempotencyKey: 'sdk-' + INVOICE_REF });
step = 'sika.sessions.create with the key again';
const replayedAgain = await sika.sessions.create({ amount_minor: 100000, invoice_ref: INVOICE_REF }, { idempotencyKey: 'sdk-' + INVOICE_REF });

// The payer starts a card payment on the hosted page (the public checkout API, no key).
step = 'POST provider-attempts';
const started = await fetch(BASE_URL + '/api/v1/checkout/sessions/' + session.id + '/provider-attempts', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ rail: 'card', amount_minor: 100000 }),
});
const attempt = await started.json();
step = 'sika.test.simulatePaymentAttempt';
const simulated = await sika.test.simulatePaymentAttempt(attempt.attempt_reference, 'paid');
step = 'sika.sessions.retrieve';
const paid = await sika.sessions.retrieve(session.id);
const successIds = [];
step = 'sika.paginate(sika.sessions.list)';
for await (const s of sika.paginate(sika.sessions.list, { status: 'success', limit: 1 })) successIds.push(s.id);

step = 'sika.payouts.capabilities';
const capabilities = await sika.payouts.capabilities();
step = 'sika.recipients.create';
const recipient = await sika.recipients.create({ bank_id: capabilities.banks[0].id, account_number: '1234567890', account_name: 'Kofi Mensah' });
step = 'sika.payouts.create';
const payout = await sika.payouts.create({ recipient_id: recipient.id, amount_minor: 50000, client_reference: 'sdk-' + INVOICE_REF });
step = 'sika.payouts.retrieve';
const payoutAgain = await sika.payouts.retrieve(payout.id);
const payoutIds = [];
step = 'sika.payouts.listAll';
for await (const p of sika.payouts.listAll()) payoutIds.push(p.id);
step = 'sika.balance.retrieve';
const balance = await sika.balance.retrieve();
step = 'sika.events.list';
const events = await sika.events.list({ object_id: session.id });
step = 'sika.events.replay';
const replay = await sika.events.replay(events.data[0].id);
step = 'sika.paymentLinks.create';
const link = await sika.paymentLinks.create({ name: 'Fees ' + INVOICE_REF, amount_minor: 25050 });
step = 'sika.paymentLinks.update';
const linkUpdated = await sika.paymentLinks.update(link.id, { active: false });
step = 'sika.paymentLinks.retrieve';
const linkAgain = await sika.paymentLinks.retrieve(link.id);
const linkIds = [];
step = 'sika.paymentLinks.listAll';
for await (const l of sika.paymentLinks.listAll({ limit: 1 })) linkIds.push(l.id);

let notFound = null;
try {
  await sika.sessions.retrieve('cs_doesnotexist');
} catch (error) {
  notFound = { isSikaError: error instanceof SikaError, name: error.name, status: error.status, code: error.code, requestId: error.requestId };
}

console.log(JSON.stringify({
  session, replayed, replayedAgain, attempt, simulated, paid, successIds, recipient, payout, payoutAgain, payoutIds, balance,
  link, linkUpdated, linkAgain, linkIds,
  events: events.data, replay, notFound,
}));
`;

const VERIFY_ESM = `
import { Sika, WebhookVerificationError, webhooks } from '@sika/node';
import { readFileSync } from 'node:fs';

const { body, headers, forgedBody, otherSecret } = JSON.parse(readFileSync('webhook.json', 'utf8'));
const secret = process.env.WEBHOOK_SECRET;
const refused = (run) => { try { run(); return 'accepted'; } catch (error) { return error instanceof WebhookVerificationError ? 'refused' : 'threw ' + error; } };
const event = Sika.webhooks.verify(Buffer.from(body), headers, secret);
console.log(JSON.stringify({
  format: 'esm',
  event,
  fromHeaders: webhooks.verify(body, new Headers(headers), secret).id,
  forged: refused(() => Sika.webhooks.verify(forgedBody, headers, secret)),
  wrongSecret: refused(() => Sika.webhooks.verify(body, headers, otherSecret)),
}));
`;

const VERIFY_CJS = `
const { Sika, SikaError, WebhookVerificationError } = require('@sika/node');
const { readFileSync } = require('node:fs');

const { body, headers, forgedBody } = JSON.parse(readFileSync('webhook.json', 'utf8'));
const secret = process.env.WEBHOOK_SECRET;
let forged = 'accepted';
try { Sika.webhooks.verify(forgedBody, headers, secret); } catch (error) { forged = error instanceof WebhookVerificationError ? 'refused' : String(error); }
const sika = new Sika({ apiKey: process.env.API_KEY, baseUrl: process.env.BASE_URL });
sika.balance.retrieve().then((balance) => {
  console.log(JSON.stringify({ format: 'cjs', event: Sika.webhooks.verify(body, headers, secret), forged, balance, sikaError: typeof SikaError, resolved: require.resolve('@sika/node') }));
});
`;

const TYPED_TS = `
import { Sika, SikaError, type SikaEvent, type RequestBody, type ResponseBody } from '@sika/node';

const sika = new Sika({ apiKey: 'ak_test_x', baseUrl: 'http://127.0.0.1:3000', maxRetries: 3, timeoutMs: 10_000 });

export async function main(): Promise<number> {
  const body: RequestBody<'/api/v1/sessions'> = { amount_minor: 1000, invoice_ref: 'INV-1' };
  const session = await sika.sessions.create(body, { idempotencyKey: 'order-1' });
  const id: string = session.id;
  const amount: number = session.amount_minor;
  // @ts-expect-error amounts are integers of pesewas, not strings
  await sika.sessions.create({ amount_minor: '10.00', invoice_ref: 'INV-2' });
  // @ts-expect-error an outcome the simulator does not know
  await sika.test.simulatePaymentAttempt('att_1', 'bogus');
  // @ts-expect-error no such path
  await sika.api.GET('/api/v1/nope');
  const { data, error } = await sika.api.GET('/api/v1/sessions/{reference}', { params: { path: { reference: id } } });
  if (error) return 0;
  const status: string | undefined = data?.status;
  for await (const s of sika.paginate(sika.sessions.list, { status: 'success' })) console.log(s.id, status);
  for await (const p of sika.payouts.listAll()) console.log(p.id);
  const payout: ResponseBody<'/api/v1/payouts', 'post'> = await sika.payouts.create({ recipient_id: 'rcp_1', amount_minor: 100, client_reference: 'c-1' });
  const again: ResponseBody<'/api/v1/payouts/{payout_id}', 'get'> = await sika.payouts.retrieve(payout.id);
  // @ts-expect-error a payout's amount is a number
  const wrong: string = again.amount_minor;
  const event: SikaEvent = Sika.webhooks.verify('{}', { 'webhook-id': 'x' }, 'whsec_x');
  const hook = Sika.webhooks.verify('{}', new Headers(), 'whsec_x');
  if (hook.type === 'checkout.session.completed') console.log(hook.data.session.amount_minor.toFixed(0));
  // @ts-expect-error not an event type of the document
  if (hook.type === 'checkout.session.nope') console.log(hook.id);
  try {
    await sika.payouts.retrieve('po_1');
  } catch (caught) {
    if (caught instanceof SikaError) return caught.status + caught.code.length + (caught.requestId ?? '').length;
  }
  return amount + event.id.length + wrong.length;
}
`;

const TYPED_CTS = `
import sdk = require('@sika/node');

const sika = new sdk.Sika({ apiKey: 'ak_test_x', baseUrl: 'http://127.0.0.1:3000' });
export async function balance(): Promise<number> {
  const answer = await sika.balance.retrieve();
  const event: sdk.SikaEvent = sdk.Sika.webhooks.verify('{}', {}, 'whsec_x');
  return Object.keys(answer).length + event.type.length;
}
`;

describe(`@sika/node: the packed tarball in a scratch project against this server (${storageKind})`, () => {
  let t: TestContext;
  let baseUrl: string;
  /** The temp dir of this run (removed after it): the tarball and the scratch project. */
  let tempDir: string | undefined;
  let scratch: string;
  let tarball: string;
  const timings: Record<string, number> = {};

  before(async () => {
    t = await startTestApp();
    baseUrl = await t.listen();
    tempDir = mkdtempSync(join(tmpdir(), 'sika-sdk-'));
    scratch = join(tempDir, 'project');
    let startedAt = performance.now();
    // The build npm pack's prepack would run (OpenAPI document, types, bundles, declarations), on its own to time it.
    await run(process.execPath, [join(PACKAGE_DIR, 'scripts', 'build.mjs')], { cwd: PACKAGE_DIR, timeout: 120_000 });
    timings.build_ms = Math.round(performance.now() - startedAt);
    startedAt = performance.now();
    const packed = JSON.parse(
      await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', tempDir], PACKAGE_DIR),
    ) as { filename: string; size: number }[];
    timings.pack_ms = Math.round(performance.now() - startedAt);
    tarball = join(tempDir, packed[0]!.filename);
    timings.tarball_bytes = statSync(tarball).size;
    mkdirSync(scratch);
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ name: 'sika-sdk-scratch', private: true, type: 'module' }),
    );
    startedAt = performance.now();
    // @types/express: the README's webhook receiver is an Express route.
    await npm(['install', tarball, '@types/express@^5', '--prefer-offline'], scratch);
    timings.install_ms = Math.round(performance.now() - startedAt);
  });
  after(async () => {
    console.log(`@sika/node: ${JSON.stringify(timings)}`);
    await t?.close();
    if (tempDir?.startsWith(join(tmpdir(), 'sika-sdk-'))) rmSync(tempDir, { recursive: true, force: true });
  });

  it('the tarball holds the bundles, declarations and README only, and installs as a dependency outside this repository', () => {
    const installed = join(scratch, 'node_modules', '@sika', 'node');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.name, '@sika/node');
    assert.equal(manifest.license, 'Apache-2.0');
    const files = readdirSync(installed, { recursive: true }).map(String).sort();
    for (const file of [
      'README.md',
      'package.json',
      'dist/index.js',
      'dist/index.cjs',
      'dist/index.d.ts',
      'dist/index.d.cts',
      'dist/generated/schema.d.cts',
    ]) {
      assert.ok(files.includes(file), `${file} is in the tarball (${files.join(', ')})`);
    }
    assert.ok(
      !files.some(
        (file) =>
          file.startsWith('src') || file === 'openapi.json' || file === 'tsconfig.json' || file === 'dist/build.json',
      ),
      `no sources: ${files.join(', ')}`,
    );
    const dependencies = readdirSync(join(scratch, 'node_modules'));
    for (const name of ['openapi-fetch', 'standardwebhooks'])
      assert.ok(dependencies.includes(name), `${name} was installed with it`);
    assert.ok(!dependencies.includes('openapi-typescript'), 'the generator is a devDependency only');
  });

  it('ESM: session, a Test payment, a recipient and a payout through the SDK; errors as SikaError', async () => {
    const m = await t.merchant({ webhookUrl: 'https://example.com/hook' });
    const invoiceRef = `INV-${randomUUID().slice(0, 8)}`;
    writeFileSync(join(scratch, 'flow.mjs'), FLOW_SCRIPT);
    const out = await node('flow.mjs', scratch, {
      BASE_URL: baseUrl,
      API_KEY: m.test_api_key,
      INVOICE_REF: invoiceRef,
    });
    const session = out.session as { id: string; status: string; amount_minor: number; invoice_ref: string };
    assert.match(session.id, /^cs_/);
    assert.equal(session.amount_minor, 100_000);
    assert.equal(session.invoice_ref, invoiceRef);
    assert.equal(
      (out.replayedAgain as { id: string }).id,
      (out.replayed as { id: string }).id,
      'the same Idempotency-Key replays the first answer',
    );
    assert.notEqual((out.replayed as { id: string }).id, session.id, 'automatic keys differ between calls');
    assert.equal((out.simulated as { session_status: string }).session_status, 'success');
    assert.equal((out.paid as { status: string }).status, 'success');
    assert.deepEqual(out.successIds, [session.id], 'paged one by one: the one paid session');
    const payout = out.payout as { id: string; amount_minor: number; status: string; recipient_id?: string };
    assert.equal(payout.amount_minor, 50_000);
    assert.equal((out.payoutAgain as { id: string }).id, payout.id);
    assert.deepEqual(out.payoutIds, [payout.id]);
    assert.ok(
      (out.events as { type: string }[]).some((event) => event.type === 'checkout.session.completed'),
      JSON.stringify(out.events),
    );
    const link = out.link as { id: string; object: string; amount_minor: number; active: boolean };
    assert.match(link.id, /^pl_/);
    assert.equal(link.object, 'payment_link');
    assert.equal(link.amount_minor, 25_050);
    assert.equal(link.active, true);
    assert.equal((out.linkUpdated as { active: boolean }).active, false);
    assert.deepEqual(out.linkAgain, out.linkUpdated);
    assert.deepEqual(out.linkIds, [link.id]);
    const replay = out.replay as { object: string; event_id: string; deliveries_queued: number };
    assert.equal(replay.object, 'event_replay');
    assert.equal(replay.event_id, (out.events as { id: string }[])[0]!.id);
    assert.equal(replay.deliveries_queued, 1, "queued again for the merchant's Test endpoint");
    assert.deepEqual(
      {
        ...(out.notFound as Record<string, unknown>),
        requestId: typeof (out.notFound as { requestId: unknown }).requestId,
      },
      {
        isSikaError: true,
        name: 'SikaError',
        status: 404,
        code: 'NOT_FOUND',
        requestId: 'string',
      },
    );

    // What the server holds, asked without the SDK.
    const auth = { authorization: `Bearer ${m.test_api_key}` };
    const stored = (await t.app.inject({ method: 'GET', url: `/api/v1/sessions/${session.id}`, headers: auth })).json();
    assert.equal(stored.status, 'success');
    const storedPayout = await t.app.inject({ method: 'GET', url: `/api/v1/payouts/${payout.id}`, headers: auth });
    assert.equal(storedPayout.statusCode, 200);
    assert.equal(storedPayout.json().amount_minor, 50_000);
    const balance = (await t.app.inject({ method: 'GET', url: '/api/v1/payouts/balance', headers: auth })).json();
    assert.deepEqual(out.balance, balance);
    const sessions = (
      await t.app.inject({ method: 'GET', url: `/api/v1/sessions?invoice_ref=${invoiceRef}`, headers: auth })
    ).json();
    assert.equal(sessions.data.length, 2, 'two sessions: the automatic key and the given one (sent twice)');
  });

  it('webhooks.verify(): an event signed by the server verifies with ESM and require(); a forged body and another secret are refused', async () => {
    const m = await t.merchant({ webhookUrl: 'https://example.com/hook' });
    assert.ok(m.test_webhook_secret);
    await fundThroughCheckout(t, m.test_api_key, 2_500);
    const listed = (
      await t.app.inject({
        method: 'GET',
        url: '/api/v1/events',
        headers: { authorization: `Bearer ${m.test_api_key}` },
      })
    ).json();
    const event = listed.data[0] as { id: string; type: string };
    assert.ok(event, 'the payment wrote an event');
    const body = JSON.stringify(event);
    const timestampS = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': event.id,
      'webhook-timestamp': String(timestampS),
      'webhook-signature': signatureHeader([m.test_webhook_secret], event.id, timestampS, body),
    };
    writeFileSync(
      join(scratch, 'webhook.json'),
      JSON.stringify({
        body,
        headers,
        forgedBody: body.replace(event.type, `${event.type}.forged`),
        otherSecret: `whsec_${Buffer.from(randomUUID()).toString('base64')}`,
      }),
    );
    writeFileSync(join(scratch, 'verify.mjs'), VERIFY_ESM);
    writeFileSync(join(scratch, 'verify.cjs'), VERIFY_CJS);
    const env = { WEBHOOK_SECRET: m.test_webhook_secret, BASE_URL: baseUrl, API_KEY: m.test_api_key };
    const esm = await node('verify.mjs', scratch, env);
    assert.deepEqual(esm, { format: 'esm', event, fromHeaders: event.id, forged: 'refused', wrongSecret: 'refused' });
    const cjs = await node('verify.cjs', scratch, env);
    assert.equal(cjs.format, 'cjs');
    assert.deepEqual(cjs.event, event);
    assert.equal(cjs.forged, 'refused');
    assert.equal(cjs.sikaError, 'function');
    assert.match(String(cjs.resolved), /node_modules\/@sika\/node\/dist\/index\.cjs$/);
    assert.equal((cjs.balance as { environment?: string }).environment, 'test');
  });

  // One tsc run (it takes seconds): the typed files and the README examples. The typed file's
  // expect-error lines make the run fail if the SDK's types were lost (anything goes with `any`).
  it("TypeScript (strict, NodeNext) resolves the types from the tarball, for import and for require, and the README examples that import '@sika/node' type-check", async () => {
    writeFileSync(join(scratch, 'typed.ts'), TYPED_TS);
    writeFileSync(join(scratch, 'typed-cjs.cts'), TYPED_CTS);
    const files = ['typed.ts', 'typed-cjs.cts'];
    for (const readme of README_FILES) {
      const examples = sdkExamples(readFileSync(readme, 'utf8'));
      assert.ok(examples.length > 0, `${readme} has an example importing '@sika/node'`);
      for (const example of examples) {
        const name = `readme-${readme === README_FILES[0] ? 'root' : 'package'}-${example.line}.${example.lang.startsWith('t') ? 'ts' : 'mjs'}`;
        writeFileSync(join(scratch, name), example.code);
        files.push(name);
      }
    }
    assert.ok(files.length >= 5, files.join(', '));
    await tsc(scratch, files);
  });
});
