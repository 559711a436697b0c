// What a refactor must not change (issue 32): starts the server of a checkout on a fresh embedded data dir,
// walks one scripted day of Test traffic through the API, the payer page and the dashboard, and writes every
// answer (status, the headers that matter, the body) to a JSON file with ids, keys, tokens and times
// replaced by stable placeholders (the n-th id seen is the same placeholder in both runs).
//
//   node --import tsx scripts/api-snapshot.ts <checkout dir> <out.json>
//   node --import tsx scripts/api-snapshot.ts --compare <a.json> <b.json>
//
// Two checkouts' snapshots compared with --compare must be equal, answer by answer; /openapi.json is compared
// raw, byte for byte.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inflateSync } from 'node:zlib';

type Answer = { step: string; status: number; headers: Record<string, string>; body: string };

const KEPT_HEADERS = [
  'content-type',
  'cache-control',
  'location',
  'allow',
  'retry-after',
  'idempotent-replayed',
  'content-disposition',
  'content-security-policy',
];

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Replaces what differs between two runs of the same steps by placeholders, numbered in order of appearance. */
function normaliser() {
  const seen = new Map<string, string>();
  const counts = new Map<string, number>();
  const placeholder = (kind: string, value: string) => {
    let name = seen.get(value);
    if (!name) {
      const n = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, n);
      name = `<${kind}#${n}>`;
      seen.set(value, name);
    }
    return name;
  };
  return (text: string) =>
    text
      .replace(/\b([a-z]{2,6})_(?:test_|live_)?[A-Za-z0-9]{12,}\b/g, (value, prefix: string) =>
        placeholder(prefix, value),
      )
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, (value) =>
        placeholder('uuid', value),
      )
      .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})\b/g, '<time>')
      .replace(/\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?\b/g, '<time>')
      .replace(/\b\d{1,2} [A-Z][a-z]{2} \d{4},? \d{2}:\d{2}\b/g, '<time>')
      .replace(/\b\d{2}:\d{2}(?::\d{2})?\b/g, '<hh:mm>')
      .replace(/\b\d{4}-\d{2}-\d{2}\b/g, '<date>')
      .replace(/\b\d{13}\b/g, '<ms>')
      .replace(/(name="(?:csrf|_csrf)"[^>]*value=")[^"]+/g, '$1<csrf>')
      .replace(/\bdash-[0-9a-f]{16,}\b/g, (value) => placeholder('request_key', value))
      .replace(/\bak_(test|live)_[A-Za-z0-9]{6,}/g, (value) => placeholder('key_prefix', value))
      .replace(/[A-Za-z0-9_-]{32,}/g, (value) => placeholder('token', value))
      .replace(
        /\b([A-Z]{2,5}-(?:\d{6}-)?)([A-Z0-9]{6,})\b/g,
        (_, prefix: string, value: string) => prefix + placeholder('ref', value),
      )
      .replace(/\b(?=[A-Z0-9]*[0-9])(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6,}\b/g, (value) => placeholder('ref', value));
}

/** The inflated content streams of a PDF, in order. */
function pdfStreams(pdf: Buffer): string {
  const parts: string[] = [];
  const latin = pdf.toString('latin1');
  for (const match of latin.matchAll(/stream\r?\n/g)) {
    const start = match.index + match[0].length;
    const end = latin.indexOf('endstream', start);
    try {
      const content = inflateSync(pdf.subarray(start, end)).toString('latin1');
      const text = content.replace(
        /<([0-9a-f]+)>/g,
        (_, hex: string) => `(${Buffer.from(hex, 'hex').toString('latin1')})`,
      );
      // Kerning between glyphs depends on the letters drawn (a random reference): dropped.
      parts.push(text.replace(/\)\s*-?\d+(?:\.\d+)?\s*\(/g, ''));
    } catch {
      /* not a Flate stream */
    }
  }
  return parts.join('\n');
}

async function startServer(checkout: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sika-snapshot-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      CHECKOUT_URL_HOST: base,
      LOG_LEVEL: 'silent',
      TZ: 'UTC',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  for (let i = 0; i < 600 && !/Dashboard\s+http\S+/.test(output); i++) await new Promise((r) => setTimeout(r, 100));
  const key = /Test API key\s+(ak_test_\S+)/.exec(output)?.[1];
  const link = /Dashboard\s+(http\S+)/.exec(output)?.[1];
  if (!key || !link) throw new Error(`the server did not print its first run:\n${output}`);
  return {
    base,
    key,
    link,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function snapshot(checkout: string) {
  const server = await startServer(checkout);
  const answers: Answer[] = [];
  const normaliseIds = normaliser();
  const normalise = (text: string) =>
    normaliseIds(
      text
        .replaceAll(server.base, '<base>')
        .replace(/\(D:\d{14}Z?\)/g, '(D:<time>)')
        .replace(/\/ID \[<[0-9a-f]+> <[0-9a-f]+>\]/g, '/ID [<id>]'),
    );
  let cookie = '';
  const call = async (
    step: string,
    method: string,
    path: string,
    init: { body?: unknown; form?: Record<string, string>; auth?: boolean; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.auth !== false) headers.authorization = `Bearer ${server.key}`;
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    } else if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const res = await fetch(server.base + path, { method, headers, body, redirect: 'manual' });
    const bytes = Buffer.from(await res.arrayBuffer());
    // A PDF's streams are compressed: its drawn text is compared, not its bytes.
    const text = res.headers.get('content-type') === 'application/pdf' ? pdfStreams(bytes) : bytes.toString('utf8');
    const setCookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    if (setCookie) cookie = setCookie;
    const kept: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = res.headers.get(name);
      if (value !== null) kept[name] = normalise(value);
    }
    answers.push({ step: normalise(step), status: res.status, headers: kept, body: normalise(text) });
    return { status: res.status, text, json: () => JSON.parse(text) };
  };
  try {
    const openapi = await call('openapi', 'GET', '/openapi.json', { auth: false });
    const firstSession = {
      body: {
        amount_minor: 12_345,
        currency: 'GHS',
        invoice_ref: 'INV-SNAP-1',
        customer: { name: 'Ama Mensah', email: 'ama@example.com', phone: '0241234567' },
        description: 'Snapshot order',
        metadata: { order: '42' },
      },
      headers: { 'idempotency-key': 'snap-key-1' },
    };
    const session = (await call('create session', 'POST', '/api/v1/sessions', firstSession)).json();
    await call('create session replayed', 'POST', '/api/v1/sessions', firstSession);
    await call('create session invalid', 'POST', '/api/v1/sessions', { body: { amount_minor: -1 } });
    await call('session', 'GET', `/api/v1/sessions/${session.id}`);
    await call('sessions', 'GET', '/api/v1/sessions?limit=5');
    await call(
      'sessions csv',
      'GET',
      `/api/v1/sessions?from=${new Date().toISOString().slice(0, 10)}&to=${new Date().toISOString().slice(0, 10)}`,
      { headers: { accept: 'text/csv' } },
    );
    await call('options', 'GET', '/api/v1/checkout/options', { auth: false });
    await call('public session', 'GET', `/api/v1/checkout/sessions/${session.id}`, { auth: false });
    const quote = (await call('quote', 'GET', `/api/v1/checkout/sessions/${session.id}/quote`, { auth: false })).json();
    await call('payer page', 'GET', `/pay/${session.id}`, { auth: false });
    const total = quote.surcharges.momo.total_minor;
    const attempt = (
      await call('attempt', 'POST', `/api/v1/checkout/sessions/${session.id}/provider-attempts`, {
        auth: false,
        body: { rail: 'momo', amount_minor: total, operator: 'mtn', phone: '0241234567' },
      })
    ).json();
    const attemptPath = `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attempt.attempt_reference}`;
    await call('attempt status', 'GET', attemptPath, { auth: false });
    await call('payer page waiting', 'GET', `/pay/${session.id}?attempt=${attempt.attempt_reference}`, { auth: false });
    await call('simulate success', 'POST', `/api/v1/test/payment-attempts/${attempt.attempt_reference}/simulate`, {
      body: { outcome: 'paid' },
    });
    await call('attempt status paid', 'GET', `${attemptPath}?refresh=1`, { auth: false });
    await call('payer page paid', 'GET', `/pay/${session.id}`, { auth: false });
    await call('session paid', 'GET', `/api/v1/sessions/${session.id}`);
    // A second session, paid by card and refunded.
    const second = (
      await call('create session 2', 'POST', '/api/v1/sessions', {
        body: { amount_minor: 5_000, currency: 'GHS', invoice_ref: 'INV-SNAP-2' },
      })
    ).json();
    const quote2 = (
      await call('quote 2', 'GET', `/api/v1/checkout/sessions/${second.id}/quote`, { auth: false })
    ).json();
    const cardAttempt = (
      await call('card attempt', 'POST', `/api/v1/checkout/sessions/${second.id}/provider-attempts`, {
        auth: false,
        body: { rail: 'card', amount_minor: quote2.surcharges.card?.total_minor ?? 5_000 },
      })
    ).json();
    await call('simulate card', 'POST', `/api/v1/test/payment-attempts/${cardAttempt.attempt_reference}/simulate`, {
      body: { outcome: 'paid' },
    });
    const refund = (
      await call('refund', 'POST', '/api/v1/refunds', {
        body: { session_id: second.id, amount_minor: 1_000, reason: 'Snapshot' },
        headers: { 'idempotency-key': 'snap-refund-1' },
      })
    ).json();
    await call('refund get', 'GET', `/api/v1/refunds/${refund.id}`);
    await call('refunds', 'GET', '/api/v1/refunds');
    // Payouts.
    await call('capabilities', 'GET', '/api/v1/payouts/capabilities');
    await call('payout balance', 'GET', '/api/v1/payouts/balance');
    const recipient = (
      await call('recipient', 'POST', '/api/v1/payouts/recipients', {
        body: { account_type: 'momo', account_name: 'Kofi Boateng', network: 'mtn', phone: '0244123456' },
        headers: { 'idempotency-key': 'snap-recipient-1' },
      })
    ).json();
    await call('recipients', 'GET', '/api/v1/payouts/recipients');
    await call('payout quote', 'POST', '/api/v1/payouts/quote', {
      body: { amount_minor: 200, recipient_id: recipient.id },
      headers: { 'idempotency-key': 'snap-quote-1' },
    });
    const payout = (
      await call('payout', 'POST', '/api/v1/payouts', {
        body: {
          amount_minor: 200,
          recipient_id: recipient.id,
          client_reference: 'snap-payout-1',
          test_outcome: 'requested',
        },
        headers: { 'idempotency-key': 'snap-payout-1' },
      })
    ).json();
    await call('payout get', 'GET', `/api/v1/payouts/${payout.id}`);
    await call('payouts', 'GET', '/api/v1/payouts');
    await call(
      'payouts csv',
      'GET',
      `/api/v1/payouts?from=${new Date().toISOString().slice(0, 10)}&to=${new Date().toISOString().slice(0, 10)}`,
      { headers: { accept: 'text/csv' } },
    );
    await call('payout processing', 'POST', `/api/v1/test/payouts/${payout.id}/simulate`, {
      body: { outcome: 'processing' },
    });
    await call('payout simulate', 'POST', `/api/v1/test/payouts/${payout.id}/simulate`, { body: { outcome: 'paid' } });
    await call('payout receipt', 'GET', `/api/v1/payouts/${payout.id}/receipt`);
    await call('payout paid', 'GET', `/api/v1/payouts/${payout.id}`);
    // Books, events, exports.
    await call('balance transactions', 'GET', '/api/v1/balance/transactions');
    const today = new Date().toISOString().slice(0, 10);
    await call('balance summary', 'GET', `/api/v1/balance/summary?from=${today}&to=${today}`);
    await call('events', 'GET', '/api/v1/events?limit=50');
    for (const name of ['balance-transactions', 'balance-summary', 'sessions', 'payouts', 'refunds']) {
      await call(`export ${name}`, 'GET', `/api/v1/exports/${name}?from=${today}&to=${today}`);
    }
    await call('invoice lines', 'GET', '/api/v1/invoice-lines?invoice_ref=INV-SNAP-1');
    await call('not found', 'GET', '/api/v1/sessions/cs_doesnotexist');
    await call('method not allowed', 'PATCH', `/api/v1/sessions/${session.id}`);
    await call('unauthorised', 'GET', '/api/v1/sessions', { auth: false });
    // The dashboard, signed in through the first run's link.
    await call('dashboard link', 'GET', new URL(server.link).pathname, { auth: false });
    for (const page of [
      '/dashboard',
      '/dashboard/sessions',
      `/dashboard/sessions/${session.id}`,
      '/dashboard/refunds',
      '/dashboard/exports',
      '/dashboard/keys',
      '/dashboard/webhooks',
      '/dashboard/users',
      '/dashboard/revenue-lines',
      '/dashboard/account',
      '/dashboard/developers',
      '/dashboard/settings',
    ]) {
      await call(`page ${page}`, 'GET', page.replace(session.id, session.id), { auth: false });
    }
    return { openapi: openapi.text.replaceAll(server.base, '<base>'), answers };
  } catch (error) {
    for (const a of answers.slice(0, 6)) console.error(a.status, a.step, a.body.slice(0, 400));
    throw error;
  } finally {
    await server.stop();
  }
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--compare') {
    const [a, b] = [JSON.parse(readFileSync(args[1]!, 'utf8')), JSON.parse(readFileSync(args[2]!, 'utf8'))];
    let differences = 0;
    if (a.openapi !== b.openapi) {
      differences++;
      console.log('/openapi.json differs');
    }
    const count = Math.max(a.answers.length, b.answers.length);
    for (let i = 0; i < count; i++) {
      const [x, y] = [JSON.stringify(a.answers[i]), JSON.stringify(b.answers[i])];
      if (x !== y) {
        differences++;
        let at = 0;
        while (x?.[at] === y?.[at]) at++;
        const around = (text?: string) => text?.slice(Math.max(0, at - 120), at + 120);
        console.log(
          `answer ${i} (${a.answers[i]?.step ?? b.answers[i]?.step}) differs at ${at}:\n  ${around(x)}\n  ${around(y)}`,
        );
      }
    }
    console.log(`${count} answers and /openapi.json compared: ${differences} differences`);
    process.exit(differences === 0 ? 0 : 1);
  }
  const [checkout, out] = args;
  if (!checkout || !out) {
    console.error('usage: api-snapshot.ts <checkout dir> <out.json> | --compare <a.json> <b.json>');
    process.exit(2);
  }
  const result = await snapshot(resolve(checkout));
  writeFileSync(out, JSON.stringify(result, null, 1));
  const statuses = result.answers.map((a) => a.status);
  console.log(`${result.answers.length} answers written to ${out} (${statuses.filter((s) => s >= 500).length} 5xx)`);
}

await main();
