// The operators' Refunds page (issue 30): each queued refund shows its environment and the payer's contact and
// method details (a bank transfer's statement sender: narration and reference; a cash payer's contact); the
// finished refunds stay listed with who finished them and when (search, filters, CSV through console-list.ts);
// Live provider refunds still pending after REFUND_STUCK_AFTER_MS are listed with their age; the merchant's
// dashboard names each hold by what it holds for. Over HTTP, with the ledger's invariants checked after.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import type { Actor } from '../../src/audit/log.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import { importStatement } from '../../src/statements/service.ts';
import { BANK_ENV, cedis, gcbStatement, liveTransfer } from '../support/bank-statements.ts';
import { ConsoleClient, flashOf as flashHtml } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';

const PASSWORD = 'ops-refunds-queue-password';
const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const flashOf = (body: string) => unescapeHtml(flashHtml(body));

describe(`the operators' Refunds page (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  let operatorEmail: string;
  let importer: Actor;

  before(async () => {
    t = await startTestApp(BANK_ENV);
    operatorEmail = `refunds-queue-${randomUUID()}@example.com`;
    const created = await createOperator(t.db, { email: operatorEmail, password: PASSWORD, role: 'operator' });
    importer = { type: 'operator', id: created.operator_id, email: operatorEmail };
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t.close());

  async function merchant(): Promise<CreatedMerchant & { ownerEmail: string; name: string }> {
    const ownerEmail = `owner-${randomUUID()}@example.com`;
    const name = `Kumasi Crafts ${randomUUID().slice(0, 6)}`;
    const created = await createMerchant(
      t.db,
      { name, email: ownerEmail, password: PASSWORD, webhookUrl: null, payoutApproval: false },
      t.webhookTargets,
    );
    return { ...created, ownerEmail, name };
  }

  /** A Live bank transfer paid by a statement credit whose narration names the sender and the reference. */
  async function paidTransfer(m: CreatedMerchant, base: number, sender: string) {
    const transfer = await liveTransfer(t, m, base);
    const result = await importStatement(t.db, {
      bankCode: 'GCB',
      fileName: `${randomUUID()}.csv`,
      csv: gcbStatement([
        { narration: `TRF FROM ${sender} ${transfer.reference}`, credit: cedis(transfer.chargedMinor) },
      ]),
      importedBy: importer,
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: collectionAccounts(t.config.providers.bankTransfer),
    });
    assert.equal(result.matched, 1, JSON.stringify(result));
    return transfer;
  }

  async function liveRefund(m: CreatedMerchant, sessionId: string, amountMinor: number): Promise<string> {
    const res = await call(t, 'POST', '/api/v1/refunds', {
      key: m.live_api_key,
      idempotencyKey: randomUUID(),
      body: { session_id: sessionId, amount_minor: amountMinor },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  }

  const section = (body: string, id: string) =>
    new RegExp(`<section class="card" aria-label="Refund ${id}">([\\s\\S]*?)</section>`).exec(body)?.[1] ?? '';

  it("a queued bank transfer refund shows Live and the statement line's sender (narration and reference) to pay it back", async () => {
    const m = await merchant();
    const sender = `KWABENA ASANTE ${randomUUID().slice(0, 6).toUpperCase()}`;
    const transfer = await paidTransfer(m, 30_000, sender);
    const refundId = await liveRefund(m, transfer.sessionId, 5_000);
    const page = await ops.get('/ops/refunds');
    assert.equal(page.statusCode, 200);
    const card = unescapeHtml(section(page.body, refundId));
    assert.ok(card, 'the refund is queued');
    assert.match(card, /<span class="badge ok"[^>]*>Live<\/span>/);
    assert.match(card, /<h3>Payer<\/h3>/);
    assert.match(
      card,
      new RegExp(`Sender \\(statement line\\)</div><span class="wrap">TRF FROM ${sender} ${transfer.reference}</span>`),
    );
    assert.match(card, /Credited<\/div>GCB · 2026-03-02/);
  });

  it('finished refunds stay listed with who and when (search, outcome and environment filters, CSV); the queue no longer holds them', async () => {
    const m = await merchant();
    const transfer = await paidTransfer(m, 40_000, 'ESI MENSAH');
    const done = await liveRefund(m, transfer.sessionId, 4_000);
    const failed = await liveRefund(m, transfer.sessionId, 1_500);
    await ops.get('/ops/refunds');
    const completed = await ops.post(`/ops/refunds/${done}/complete`, {
      payer_account: 'GCB 1011139998877 Esi Mensah',
      transfer_reference: `TRF-${randomUUID().slice(0, 6)}`,
    });
    assert.equal(completed.statusCode, 200, flashOf(completed.body));
    const refused = await ops.post(`/ops/refunds/${failed}/fail`, { reason: "The payer's account is closed" });
    assert.equal(refused.statusCode, 200, flashOf(refused.body));

    const page = unescapeHtml((await ops.get(`/ops/refunds?q=${encodeURIComponent(m.name)}`)).body);
    assert.equal(section(page, done), '', 'no longer queued');
    const row = (id: string) => new RegExp(`<tr data-finished="${id}">([\\s\\S]*?)</tr>`).exec(page)?.[1] ?? '';
    assert.match(row(done), /\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    assert.match(row(done), /badge ok[^>]*>Live</);
    assert.match(row(done), /succeeded/);
    assert.ok(row(done).includes(`operator:${operatorEmail}`) || row(done).includes(operatorEmail), 'who recorded it');
    assert.match(row(done), /GCB 1011139998877 Esi Mensah \(TRF-/);
    assert.match(row(failed), /failed/);
    assert.match(row(failed), /The payer's account is closed/);

    const onlyFailed = unescapeHtml(
      (await ops.get(`/ops/refunds?q=${encodeURIComponent(m.name)}&status=failed&environment=live`)).body,
    );
    assert.ok(onlyFailed.includes(`data-finished="${failed}"`));
    assert.ok(!onlyFailed.includes(`data-finished="${done}"`));
    assert.match(onlyFailed, /<option value="failed" selected>failed<\/option>/);
    const testOnly = await ops.get(`/ops/refunds?q=${encodeURIComponent(m.name)}&environment=test`);
    assert.ok(!testOnly.body.includes(`data-finished="${done}"`));

    const csv = await ops.get(`/ops/refunds?q=${encodeURIComponent(m.name)}&format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    const lines = csv.body.trim().split(/\r?\n/);
    assert.match(
      lines[0]!,
      /^finished_at,refund,environment,status,merchant,session,amount_ghs,finished_by,payer_account,transfer_reference,failure_reason$/,
    );
    assert.equal(lines.length, 3, csv.body);
    assert.ok(
      lines.some((line) => line.includes(done) && line.includes(',live,succeeded,') && line.includes(',40.00,')),
    );
    assert.ok(lines.some((line) => line.includes(failed) && line.includes(',failed,') && line.includes(',15.00,')));
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a Live provider refund pending past the limit is listed as stuck with its age; a fresh one is not', async () => {
    const m = await merchant();
    const transfer = await paidTransfer(m, 25_000, 'YAW BOATENG');
    const old = await liveRefund(m, transfer.sessionId, 2_000);
    const fresh = await liveRefund(m, transfer.sessionId, 1_000);
    // As a refund sent to a provider (a MoMo or card payment's) that never answered: 30 hours ago, and one just now.
    for (const [id, hoursAgo] of [
      [old, 30],
      [fresh, 1],
    ] as const) {
      await t.db.query(
        `UPDATE refunds SET route = 'provider', provider = 'paystack', provider_reference = $2, processing_step = 'awaiting_result', status_checks = 3,
                created_at = now() - make_interval(hours => $3::int) WHERE id = $1`,
        [id, `sika_rf_${randomUUID().slice(0, 8)}`, hoursAgo],
      );
    }
    const page = unescapeHtml((await ops.get('/ops/refunds')).body);
    const row = new RegExp(`<tr data-stuck="${old}">([\\s\\S]*?)</tr>`).exec(page)?.[1] ?? '';
    assert.ok(row, 'the old one is stuck');
    assert.match(row, /badge ok[^>]*>Live</);
    assert.match(row, /paystack/);
    assert.match(row, /sent; 3 status checks/);
    assert.match(row, /(29|30|31) hours/);
    assert.ok(!page.includes(`data-stuck="${fresh}"`), 'a refund pending an hour is not stuck');
    assert.match(page, /Live refunds sent to a provider and still pending 24 hours or more/);
  });

  it("the merchant's dashboard names each hold: a pending refund's hold is held for refunds, not for payouts", async () => {
    const m = await merchant();
    const transfer = await paidTransfer(m, 50_000, 'ABENA OWUSU');
    await liveRefund(m, transfer.sessionId, 12_345);
    const owner = await new ConsoleClient(t, '/dashboard').signedIn(m.ownerEmail, PASSWORD);
    const home = unescapeHtml((await owner.get('/dashboard')).body);
    const live = /<section class="card" aria-label="Live balance">([\s\S]*?)<\/section>/.exec(home)?.[1] ?? '';
    assert.match(live, /<div class="label">Held for payouts<\/div><div class="value">GHS 0\.00<\/div>/);
    assert.match(live, /<div class="label">Held for refunds<\/div><div class="value">GHS 123\.45<\/div>/);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });
});
