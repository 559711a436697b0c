// Refunds in the consoles (issue 17), over HTTP with cookies and CSRF tokens as a browser sends them: the
// dashboard's Refund form on a paid session (Test and Live), its refusals shown on the page (balance, payment,
// role, amount), the four-eyes approval of a Live refund on the Refunds page, and the operator console's queue
// where an operator records the transfer to the payer of a bank transfer (succeeded) or fails it (hold released).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Role } from '../../src/accounts/model.ts';
import { createMerchant, hashPassword, type CreatedMerchant } from '../../src/accounts/service.ts';
import type { Actor } from '../../src/audit/log.ts';
import { requestRefund } from '../../src/refunds/session-refunds.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { LiveProviders } from '../../src/rails/live.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import { importStatement } from '../../src/statements/service.ts';
import {
  BANK_ENV,
  cedis,
  gcbStatement,
  liveBalance,
  liveTransfer,
  sessionStatus,
  uniqueWords,
} from '../support/bank-statements.ts';
import { createSession, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import { ConsoleClient, flashOf as flashHtml } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { balanceOf, fund } from '../support/payouts-fixtures.ts';

const PASSWORD = 'refunds-console-password';
const OPERATOR: Actor = { type: 'operator', id: randomUUID(), email: 'refunds-console-statements@example.com' };

/** The flash message's text (the page escapes it). */
const flashOf = (body: string) =>
  flashHtml(body)
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

interface Merchant extends CreatedMerchant {
  ownerEmail: string;
}

interface RefundRowSeen {
  id: string;
  status: string;
  route: string;
  environment: string;
  amount_minor: number;
  api_key_id: string | null;
  requested_by_user_id: string | null;
  decided_by_user_id: string | null;
  failure_reason: string | null;
  payer_account: string | null;
  transfer_reference: string | null;
  completed_by: string | null;
}

const refundsOf = (t: TestContext, sessionId: string) =>
  t.db.query<RefundRowSeen>(
    `SELECT id, status, route, environment, amount_minor, api_key_id, requested_by_user_id, decided_by_user_id, failure_reason, payer_account, transfer_reference, completed_by
       FROM refunds WHERE session_id = $1 ORDER BY created_at, id`,
    [sessionId],
  );
const refundedOf = async (t: TestContext, sessionId: string) =>
  (
    await t.db.query<{ n: number }>('SELECT refunded_minor::int AS n FROM checkout_sessions WHERE id = $1', [sessionId])
  )[0]!.n;

describe(`refunds in the dashboard and the operator console (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  let operatorEmail: string;

  before(async () => {
    t = await startTestApp(BANK_ENV);
    operatorEmail = `refunds-ops-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD, role: 'operator' });
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t?.close());

  async function merchant(options: { payoutApproval?: boolean } = {}): Promise<Merchant> {
    const ownerEmail = `refunds-owner-${randomUUID()}@example.com`;
    const created = await createMerchant(
      t.db,
      {
        name: `Ama Fabrics ${randomUUID().slice(0, 6)}`,
        email: ownerEmail,
        password: PASSWORD,
        webhookUrl: null,
        payoutApproval: options.payoutApproval ?? false,
      },
      t.webhookTargets,
    );
    return { ...created, ownerEmail };
  }

  async function userOf(m: Merchant, role: Role): Promise<{ id: string; email: string }> {
    const id = randomUUID();
    const email = `${role}-${id}@example.com`;
    await t.db.query('INSERT INTO users (id, merchant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5)', [
      id,
      m.merchant_id,
      email,
      await hashPassword(PASSWORD),
      role,
    ]);
    return { id, email };
  }

  const signedIn = (email: string) => new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);

  async function toLive(client: ConsoleClient): Promise<void> {
    const res = await client.post('/dashboard/environment', { environment: 'live', return_to: '/dashboard/refunds' });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/dashboard/refunds');
  }

  /** A paid Test session: card (charged the base; the merchant bears the fee) or momo (the payer bears it). */
  async function paidTestSession(m: Merchant, base: number, rail: 'card' | 'momo' = 'card') {
    const session = await createSession(t, m, { amount_minor: base });
    const attempt = await startAttempt(
      t,
      session.id,
      rail === 'card' ? { rail: 'card', amount_minor: totalOf('card', base) } : momoBody(base),
    );
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return { sessionId: session.id as string, charged: totalOf(rail, base) };
  }

  /** A Live bank transfer paid by a statement credit of the exact amount (the operator's import). */
  async function paidLiveTransfer(m: Merchant, base: number) {
    const transfer = await liveTransfer(t, m, base);
    const result = await importStatement(t.db, {
      bankCode: 'GCB',
      fileName: 'refunds.csv',
      csv: gcbStatement([
        { narration: `${uniqueWords()} ${transfer.reference}`, credit: cedis(transfer.chargedMinor) },
      ]),
      importedBy: OPERATOR,
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: collectionAccounts(t.config.providers.bankTransfer),
    });
    assert.equal(result.matched, 1, JSON.stringify(result));
    assert.equal(await sessionStatus(t, transfer.sessionId), 'success');
    return transfer;
  }

  /** Posts the Refund form: on success it sends the browser back to the session's page (303), which names the refund. */
  async function refundThroughForm(
    client: ConsoleClient,
    sessionId: string,
    fields: Record<string, string>,
  ): Promise<LightMyRequestResponse> {
    const res = await client.post(`/dashboard/sessions/${sessionId}/refunds`, fields);
    assert.equal(res.statusCode, 303, res.body.slice(0, 400));
    const location = String(res.headers.location);
    assert.match(location, new RegExp(`^/dashboard/sessions/${sessionId}\\?refund=re_\\w+$`));
    const page = await client.get(location);
    assert.equal(page.statusCode, 200);
    return page;
  }

  const refundForm = (body: string, sessionId: string) =>
    body.includes(`action="/dashboard/sessions/${sessionId}/refunds"`);
  const amountDefault = (body: string) => /id="refund-amount" name="amount"[^>]* value="([^"]*)"/.exec(body)?.[1];

  async function assertRefused(res: LightMyRequestResponse, status: number, message: RegExp) {
    assert.equal(res.statusCode, status, res.body.slice(0, 400));
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /role="alert"/);
    assert.match(flashOf(res.body), message);
  }

  it('a refund of a paid Test session from its page succeeds at once and shows on the page; the form offers the rest; a bad amount is refused on the page', async () => {
    const m = await merchant();
    const owner = await signedIn(m.ownerEmail);
    const paid = await paidTestSession(m, 20_000); // card: charged 20,000, credited 19,500

    const before = await owner.get(`/dashboard/sessions/${paid.sessionId}`);
    assert.equal(before.statusCode, 200);
    assert.ok(refundForm(before.body, paid.sessionId), 'an owner sees the Refund form');
    assert.equal(amountDefault(before.body), '200.00', 'the default is all that can be refunded');
    assert.match(before.body, /No refunds yet\./);

    for (const amount of ['12.345', '0', '0.00', '-5', 'ten', '1e3']) {
      await assertRefused(
        await owner.post(`/dashboard/sessions/${paid.sessionId}/refunds`, { amount, reason: 'x' }),
        400,
        /^Amount is not valid: enter an amount in GHS above zero with at most 2 decimals/,
      );
    }
    assert.equal((await refundsOf(t, paid.sessionId)).length, 0);

    const res = await refundThroughForm(owner, paid.sessionId, { amount: '50.10', reason: 'One shirt returned' });
    assert.equal(flashOf(res.body), 'Refund of GHS 50.10 requested: it succeeded.');
    const [row] = await refundsOf(t, paid.sessionId);
    assert.deepEqual(
      {
        status: row!.status,
        amount: row!.amount_minor,
        environment: row!.environment,
        route: row!.route,
        key: row!.api_key_id,
        user: row!.requested_by_user_id,
      },
      { status: 'succeeded', amount: 5_010, environment: 'test', route: 'test', key: null, user: m.owner_user_id },
    );
    assert.equal(await refundedOf(t, paid.sessionId), 5_010);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 19_500 - 5_010);

    const page = await owner.get(`/dashboard/sessions/${paid.sessionId}`);
    assert.equal(flashOf(page.body), '', 'only the page the form sent you to names the refund');
    assert.match(
      page.body,
      new RegExp(
        `<td class="mono id" data-label="Refund">${row!.id}</td><td class="num" data-label="Amount">GHS 50\\.10</td><td data-label="Status"><span><span class="badge ok">succeeded</span>`,
      ),
    );
    assert.match(page.body, /One shirt returned/);
    assert.match(page.body, /<div class="label">Refunded<\/div><div class="value">GHS 50\.10<\/div>/);
    assert.equal(amountDefault(page.body), '149.90', 'the rest of the payment');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);

    // The rest (the fee of the payment is not returned: the balance needs 500 more), then nothing is left: the form is gone.
    await fund(t, m.merchant_id, 'test', 500);
    const rest = await refundThroughForm(owner, paid.sessionId, { amount: '149.90' });
    assert.equal(await refundedOf(t, paid.sessionId), 20_000);
    assert.ok(!refundForm(rest.body, paid.sessionId));
    await assertRefused(
      await owner.post(`/dashboard/sessions/${paid.sessionId}/refunds`, { amount: '0.01' }),
      409,
      /already refunded in full/,
    );
  });

  it('the same form sent twice at once (a double click) makes one refund; both answers lead to it', async () => {
    const m = await merchant();
    const owner = await signedIn(m.ownerEmail);
    const paid = await paidTestSession(m, 20_000);
    const page = await owner.get(`/dashboard/sessions/${paid.sessionId}`);
    const key = /name="request_key" value="(dash-[0-9a-f]{24})"/.exec(page.body)?.[1];
    assert.ok(key, 'the form carries a one-time key');
    const fields = { amount: '10.00', reason: 'double click', request_key: key };
    const [a, b] = await Promise.all([
      owner.post(`/dashboard/sessions/${paid.sessionId}/refunds`, fields),
      owner.post(`/dashboard/sessions/${paid.sessionId}/refunds`, fields),
    ]);
    assert.equal(a.statusCode, 303, a.body);
    assert.equal(b.statusCode, 303, b.body);
    assert.equal(a.headers.location, b.headers.location);
    assert.equal((await refundsOf(t, paid.sessionId)).length, 1);
    assert.equal(await refundedOf(t, paid.sessionId), 1_000);
    const fresh = /name="request_key" value="(dash-[0-9a-f]{24})"/.exec(
      (await owner.get(`/dashboard/sessions/${paid.sessionId}`)).body,
    )?.[1];
    assert.notEqual(fresh, key, 'each rendering of the form has its own key');
  });

  it('a refund the available balance cannot cover shows INSUFFICIENT_FUNDS on the page; more than the payment and an unpaid session are refused too; nothing is written', async () => {
    const m = await merchant();
    const owner = await signedIn(m.ownerEmail);
    const paid = await paidTestSession(m, 10_000, 'momo'); // charged 10,150 (the payer bore the fee); credited 10,000
    assert.equal(paid.charged, 10_150);

    await assertRefused(
      await owner.post(`/dashboard/sessions/${paid.sessionId}/refunds`, { amount: '101.50' }),
      409,
      /Your available balance does not cover this refund of GHS 101.50/,
    );
    await assertRefused(
      await owner.post(`/dashboard/sessions/${paid.sessionId}/refunds`, { amount: '101.51' }),
      409,
      /At most GHS 101\.50 of the payment of GHS [\d,.]+ can still be refunded\./,
    );
    const open = await createSession(t, m);
    const notPaid = await owner.post(`/dashboard/sessions/${open.id}/refunds`, { amount: '1.00' });
    await assertRefused(notPaid, 409, /only a paid \(success\) session can be refunded/);
    assert.ok(!refundForm(notPaid.body, open.id), 'an unpaid session has no Refund form');
    await assertRefused(
      await owner.post(`/dashboard/sessions/cs_${randomUUID().replace(/-/g, '')}/refunds`, { amount: '1.00' }),
      404,
      /not found/i,
    );
    assert.equal((await refundsOf(t, paid.sessionId)).length, 0);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 10_000);

    // Once the balance covers it, the same form succeeds.
    await fund(t, m.merchant_id, 'test', 150);
    await refundThroughForm(owner, paid.sessionId, { amount: '101.50' });
    assert.equal((await refundsOf(t, paid.sessionId))[0]!.status, 'succeeded');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a viewer sees the payment and refunds but no Refund form, and posting one is a 403 page that writes nothing', async () => {
    const m = await merchant();
    const viewer = await signedIn((await userOf(m, 'viewer')).email);
    const paid = await paidTestSession(m, 5_000);
    const page = await viewer.get(`/dashboard/sessions/${paid.sessionId}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h2>Payment<\/h2>/);
    assert.match(page.body, /<h2>Refunds<\/h2>/);
    assert.ok(!refundForm(page.body, paid.sessionId), 'no Refund form for a viewer');
    await assertRefused(
      await viewer.post(`/dashboard/sessions/${paid.sessionId}/refunds`, { amount: '10.00' }),
      403,
      /Your role cannot refund payments/,
    );
    assert.equal((await refundsOf(t, paid.sessionId)).length, 0);
    // An approver may decide refunds but not ask for them (as for payouts).
    const approver = await signedIn((await userOf(m, 'approver')).email);
    await assertRefused(
      await approver.post(`/dashboard/sessions/${paid.sessionId}/refunds`, { amount: '10.00' }),
      403,
      /Your role cannot refund payments/,
    );
    assert.equal((await refundsOf(t, paid.sessionId)).length, 0);
  });

  it('a Live refund of a merchant that requires approval awaits it: the requester and a developer cannot approve (403 page), an approver who asked cannot, another approver approves (pending, in the operator queue)', async () => {
    const m = await merchant({ payoutApproval: true });
    const owner = await signedIn(m.ownerEmail);
    const developer = await signedIn((await userOf(m, 'developer')).email);
    const approverA = await userOf(m, 'approver');
    const approverBUser = await userOf(m, 'approver');
    const approverB = await signedIn(approverBUser.email);
    const transfer = await paidLiveTransfer(m, 40_000);
    const balanceBefore = await liveBalance(t, m);

    await toLive(owner);
    const page = await owner.get(`/dashboard/sessions/${transfer.sessionId}`);
    assert.equal(page.statusCode, 200, page.body.slice(0, 300));
    assert.match(page.body, /an approver must approve it first/);
    const res = await refundThroughForm(owner, transfer.sessionId, { amount: '100.00', reason: 'Order cancelled' });
    assert.equal(flashOf(res.body), 'Refund of GHS 100.00 requested: it awaits approval by another approver.');
    const [refund] = await refundsOf(t, transfer.sessionId);
    assert.deepEqual(
      [refund!.status, refund!.environment, refund!.route, refund!.requested_by_user_id],
      ['awaiting_approval', 'live', 'operator', m.owner_user_id],
    );
    assert.equal(await liveBalance(t, m), balanceBefore - 10_000, 'held while it awaits approval');

    // The requester sees it on the Refunds page without an Approve button; posting a decision is refused.
    const list = await owner.get('/dashboard/refunds?status=awaiting_approval');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, new RegExp(`<td class="mono id" data-label="Refund">${refund!.id}</td>`));
    assert.ok(!list.body.includes(`action="/dashboard/refunds/${refund!.id}/decision"`));
    await assertRefused(
      await owner.post(`/dashboard/refunds/${refund!.id}/decision`, { decision: 'approve' }),
      403,
      /Only a user with the approver role/,
    );
    await toLive(developer);
    await assertRefused(
      await developer.post(`/dashboard/refunds/${refund!.id}/decision`, { decision: 'approve' }),
      403,
      /Only a user with the approver role/,
    );
    assert.equal((await refundsOf(t, transfer.sessionId))[0]!.status, 'awaiting_approval');

    // An approver who asked for a refund (here through the service) sees no button for it and cannot decide it.
    const own = await requestRefund(
      t.db,
      { merchantId: m.merchant_id, environment: 'live', apiKeyId: null, userId: approverA.id },
      { session_id: transfer.sessionId, amount_minor: 1_000 },
      LiveProviders.none(),
    );
    const approverAClient = await signedIn(approverA.email);
    await toLive(approverAClient);
    const ownList = await approverAClient.get('/dashboard/refunds');
    assert.ok(
      ownList.body.includes(`action="/dashboard/refunds/${refund!.id}/decision"`),
      "approver A may decide the owner's refund",
    );
    assert.ok(!ownList.body.includes(`action="/dashboard/refunds/${own.id}/decision"`), 'but not the one A asked for');
    assert.match(ownList.body, /You asked for it: another approver decides\./);
    await assertRefused(
      await approverAClient.post(`/dashboard/refunds/${own.id}/decision`, { decision: 'approve' }),
      403,
      /requester of a refund cannot approve/,
    );

    // In Test mode the Live refund is not found.
    await assertRefused(
      await approverB.post(`/dashboard/refunds/${refund!.id}/decision`, { decision: 'approve' }),
      404,
      /not found/i,
    );
    await toLive(approverB);
    const bList = await approverB.get('/dashboard/refunds');
    assert.ok(
      bList.body.includes(`action="/dashboard/refunds/${refund!.id}/decision"`),
      'another approver sees the decision form',
    );
    await assertRefused(
      await approverB.post(`/dashboard/refunds/${refund!.id}/decision`, { decision: 'maybe' }),
      400,
      /^Decision must be approve or reject\.$/,
    );
    const approved = await approverB.post(`/dashboard/refunds/${refund!.id}/decision`, { decision: 'approve' });
    assert.equal(approved.statusCode, 200, approved.body.slice(0, 300));
    assert.equal(flashOf(approved.body), `Refund ${refund!.id} approved: it is pending.`);
    const [decided] = await refundsOf(t, transfer.sessionId);
    assert.deepEqual([decided!.status, decided!.decided_by_user_id], ['pending', approverBUser.id]);
    // Rejecting A's own one (B did not ask for it) releases its hold.
    const rejected = await approverB.post(`/dashboard/refunds/${own.id}/decision`, {
      decision: 'reject',
      reason: 'duplicate',
    });
    assert.equal(flashOf(rejected.body), `Refund ${own.id} rejected: it is cancelled.`);
    assert.equal(await liveBalance(t, m), balanceBefore - 10_000);

    const queue = await ops.get('/ops/refunds');
    assert.match(
      queue.body,
      new RegExp(`action="/ops/refunds/${refund!.id}/complete"`),
      'approved: waiting for an operator',
    );
    assert.ok(!queue.body.includes(own.id), 'a cancelled refund is not queued');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a Live refund whose provider is not configured shows PROVIDER_RAIL_UNAVAILABLE on the page (503 with Retry-After), never a 500; nothing is written', async () => {
    const m = await merchant();
    const owner = await signedIn(m.ownerEmail);
    await toLive(owner);
    const transfer = await paidLiveTransfer(m, 20_000);
    // As if Paystack had taken this payment and were no longer configured in this process (the test app has no Live providers).
    await t.db.query(
      "UPDATE payment_attempts SET rail = 'momo', network = 'mtn', phone = '+233241234567', provider = 'paystack' WHERE id = $1",
      [transfer.attemptId],
    );
    const res = await owner.post(`/dashboard/sessions/${transfer.sessionId}/refunds`, { amount: '10.00' });
    await assertRefused(
      res,
      503,
      /The provider that took this payment \(paystack\) is not configured for refunds right now/,
    );
    assert.equal(res.headers['retry-after'], '60');
    assert.match(res.body, /<h1>Session <span class="mono">/, 'the session page, not the error page');
    assert.equal((await refundsOf(t, transfer.sessionId)).length, 0);
  });

  it("an operator records the transfer of a queued Live refund (succeeded, the session's refunded_minor grows) and fails another (its hold released); the merchant sees both", async () => {
    const m = await merchant();
    const owner = await signedIn(m.ownerEmail);
    await toLive(owner);
    const transfer = await paidLiveTransfer(m, 60_000);
    const balanceBefore = await liveBalance(t, m);
    for (const amount of ['150.00', '70.25']) {
      const res = await refundThroughForm(owner, transfer.sessionId, { amount, reason: 'returned goods' });
      assert.equal(
        flashOf(res.body),
        `Refund of GHS ${amount} requested: Sika's operators will transfer it to the payer.`,
      );
    }
    const [first, second] = await refundsOf(t, transfer.sessionId);
    assert.deepEqual(
      [first!.status, first!.route, second!.status, second!.route],
      ['pending', 'operator', 'pending', 'operator'],
    );
    assert.equal(await liveBalance(t, m), balanceBefore - 22_025);

    const queue = await ops.get('/ops/refunds');
    assert.equal(queue.statusCode, 200);
    assert.match(queue.body, /<a href="\/ops\/refunds" aria-current="page">Refunds<\/a>/);
    for (const r of [first!, second!]) {
      const card = new RegExp(`<section class="card" aria-label="Refund ${r.id}">[\\s\\S]*?</section>`).exec(
        queue.body,
      )?.[0];
      assert.ok(card, `${r.id} is queued`);
      assert.match(card, new RegExp(`${transfer.reference}`));
      assert.match(card, new RegExp(`<a href="/ops/merchants/${m.merchant_id}">Ama Fabrics`));
      assert.match(card, new RegExp(transfer.sessionId));
      assert.match(card, new RegExp(transfer.attemptId));
      assert.match(card, /Bank transfer/);
    }
    assert.match(queue.body, /GHS 150\.00 to the payer of/);

    await assertRefused(
      await ops.post(`/ops/refunds/${first!.id}/complete`, {
        payer_account: 'GCB 1011130099999',
        transfer_reference: ' ',
      }),
      400,
      /Enter the payer's account and the transfer's reference/,
    );
    await assertRefused(
      await ops.post(`/ops/refunds/${second!.id}/fail`, { reason: '' }),
      400,
      /^Reason is required\.$/,
    );

    const done = await ops.post(`/ops/refunds/${first!.id}/complete`, {
      payer_account: 'GCB 1011130099999 (K. Mensah)',
      transfer_reference: 'FT26078ABC',
    });
    assert.equal(done.statusCode, 200, done.body.slice(0, 300));
    assert.match(flashOf(done.body), new RegExp(`Refund ${first!.id} of GHS 150\\.00 is succeeded`));
    assert.ok(!done.body.includes(`action="/ops/refunds/${first!.id}/complete"`), 'no longer queued');
    const failed = await ops.post(`/ops/refunds/${second!.id}/fail`, { reason: 'The payer closed the account' });
    assert.equal(failed.statusCode, 200);
    assert.match(flashOf(failed.body), /is failed; GHS 70\.25 is back on the merchant's available balance/);

    const [paidOut, released] = await refundsOf(t, transfer.sessionId);
    assert.deepEqual(
      [paidOut!.status, paidOut!.payer_account, paidOut!.transfer_reference, paidOut!.completed_by],
      ['succeeded', 'GCB 1011130099999 (K. Mensah)', 'FT26078ABC', operatorEmail],
    );
    assert.deepEqual(
      [released!.status, released!.failure_reason, released!.completed_by],
      ['failed', 'The payer closed the account', operatorEmail],
    );
    assert.equal(await refundedOf(t, transfer.sessionId), 15_000);
    assert.equal(await liveBalance(t, m), balanceBefore - 15_000, 'the failed refund is released');
    const audited = await t.db.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE object_type = 'refund' AND object_id = ANY($1) ORDER BY action",
      [[first!.id, second!.id]],
    );
    assert.deepEqual(
      audited.map((a) => a.action),
      ['refund.operator_failed', 'refund.operator_succeeded'],
    );

    // A second outcome for the same refund is refused on the page.
    await assertRefused(
      await ops.post(`/ops/refunds/${first!.id}/fail`, { reason: 'late' }),
      409,
      /only a pending refund can be settled/,
    );

    const page = await owner.get(`/dashboard/sessions/${transfer.sessionId}`);
    assert.match(page.body, /<span class="badge ok">succeeded<\/span>/);
    assert.match(
      page.body,
      /<span class="badge bad">failed<\/span><br><span class="muted">The payer closed the account<\/span>/,
    );
    assert.match(page.body, /Sika&#39;s operators \(a transfer\)/);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });
});
