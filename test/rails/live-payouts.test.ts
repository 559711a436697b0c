// Live payouts end to end over real HTTP: bank accounts and Telecel/AT wallets through Paystack Transfers,
// MTN wallets through MTN MoMo Disbursement; each paid, failed, rejected at the name check and returned;
// a lost transfer answer; pending transfers asked about on a bounded backoff.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { STANDIN_DISBURSEMENT, startMtnMomoStandIn, type MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import { startPaystackStandIn, STAND_IN_GHANA_BANKS, type PaystackStandIn } from '../support/standins/paystack.ts';
import { driveUntil, eventually, freePort, startLiveApp, type LiveApp } from '../support/live.ts';
import { fund, WEBHOOK_URL } from '../support/payouts-fixtures.ts';

const SECRET = 'sk_test_payouts_secret';
const GCB_PAYSTACK_CODE = STAND_IN_GHANA_BANKS.find((bank) => bank.name.startsWith('GCB'))!.code;

describe('Live payouts through Paystack and MTN MoMo', () => {
  let paystack: PaystackStandIn;
  let mtn: MtnMomoStandIn;
  let app: LiveApp;
  let m: CreatedMerchant;
  let gcbId: string;

  const api = (method: string, path: string, body?: unknown) => app.http(method, path, { key: m.live_api_key, body });
  const step = (id: string) => processDuePayouts(app.t.db, app.t.app.deps.providers, { only: [id] });
  const makeDue = (id: string) => app.t.db.query('UPDATE payouts SET next_step_at = now() WHERE id = $1', [id]);
  const row = async (id: string) =>
    (
      await app.t.db.query<{
        status: string;
        processing_step: string | null;
        provider: string | null;
        provider_reference: string | null;
        failure_reason: string | null;
        status_checks: number;
        next_step_at: Date | null;
      }>(
        'SELECT status, processing_step, provider, provider_reference, failure_reason, status_checks, next_step_at FROM payouts WHERE id = $1',
        [id],
      )
    )[0]!;
  /** Runs the processor until the payout waits at the provider or is done. */
  const drive = (id: string, until: (r: Awaited<ReturnType<typeof row>>) => boolean) =>
    driveUntil(
      () => row(id),
      async () => {
        await makeDue(id);
        await step(id);
      },
      until,
    );
  async function recipient(body: Record<string, unknown>) {
    const res = await api('POST', '/api/v1/payouts/recipients', body);
    assert.equal(res.status, 201, res.text);
    return res.json.id as string;
  }
  async function payout(recipientId: string, amountMinor = 5_000) {
    const res = await api('POST', '/api/v1/payouts', {
      recipient_id: recipientId,
      amount_minor: amountMinor,
      client_reference: `ref-${Math.random().toString(36).slice(2)}`,
    });
    assert.equal(res.status, 201, res.text);
    return res.json as { id: string; status: string };
  }
  const waitingAtProvider = (r: {
    status: string;
    processing_step: string | null;
    provider_reference: string | null;
  }) => r.status !== 'processing' || (r.processing_step === 'awaiting_result' && r.provider_reference !== null);

  before(async () => {
    const port = await freePort();
    paystack = await startPaystackStandIn({
      secretKey: SECRET,
      webhookUrl: `http://127.0.0.1:${port}/api/v1/providers/paystack/webhook`,
    });
    mtn = await startMtnMomoStandIn({ accountHolders: { '233241112233': { name: 'AMA OWUSU' } } });
    app = await startLiveApp(port, {
      PAYSTACK_SECRET_KEY: SECRET,
      PAYSTACK_BASE_URL: paystack.baseUrl,
      MTN_MOMO_BASE_URL: mtn.baseUrl,
      MTN_MOMO_DISBURSEMENT_SUBSCRIPTION_KEY: STANDIN_DISBURSEMENT.subscriptionKey,
      MTN_MOMO_DISBURSEMENT_USER_ID: STANDIN_DISBURSEMENT.userId,
      MTN_MOMO_DISBURSEMENT_API_KEY: STANDIN_DISBURSEMENT.apiKey,
    });
    m = await app.t.merchant({ webhookUrl: WEBHOOK_URL });
    await setPayoutAccess(app.t.db, m.merchant_id, 'live', { payout_access: true });
    await fund(app.t, m.merchant_id, 'live', 10_000_000);
    const caps = (await api('GET', '/api/v1/payouts/capabilities')).json;
    gcbId = caps.banks.find((bank: { code: string }) => bank.code === 'GCB').id;
    assert.deepEqual(
      caps.mobile_money_networks.map((n: { value: string }) => n.value),
      ['mtn', 'telecel', 'at'],
    );
  });
  after(async () => {
    await app?.t.close();
    await paystack?.close();
    await mtn?.close();
  });

  it('a bank account through Paystack: name checked, recipient and transfer with our stored reference, paid on the verified webhook', async () => {
    paystack.setAccount(GCB_PAYSTACK_CODE, '1000000001', 'KOFI MENSAH');
    const p = await payout(
      await recipient({ bank_id: gcbId, account_number: '1000000001', account_name: 'Kofi Mensah' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    assert.equal(waiting.provider, 'paystack');
    const transfer = paystack.transfer(waiting.provider_reference!)!;
    assert.ok(transfer, 'Paystack got the transfer under the stored reference');
    assert.equal(transfer.amount, 5_000);
    assert.equal(transfer.currency, 'GHS');
    assert.equal(paystack.recipients.at(-1)!.type, 'ghipss');
    paystack.settleTransfer(waiting.provider_reference!, 'success');
    await paystack.webhooksIdle();
    const paid = await eventually(async () => ((await row(p.id)).status === 'paid' ? true : undefined));
    assert.ok(paid);
    assert.equal(paystack.transfersSent, paystack.transfers.length);
  });

  it('a transfer Paystack fails: the payout fails and its money is released', async () => {
    paystack.setAccount(GCB_PAYSTACK_CODE, '1000000002', 'KOFI MENSAH');
    const before = (await api('GET', '/api/v1/payouts/balance')).json;
    const p = await payout(
      await recipient({ bank_id: gcbId, account_number: '1000000002', account_name: 'Kofi Mensah' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    paystack.settleTransfer(waiting.provider_reference!, 'failed', { reason: 'Account closed' });
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'failed' ? true : undefined));
    const afterBalance = (await api('GET', '/api/v1/payouts/balance')).json;
    assert.equal(afterBalance.available_minor, before.available_minor);
  });

  it('a recipient whose bank holds another name is rejected at the check; no transfer is sent', async () => {
    paystack.setAccount(GCB_PAYSTACK_CODE, '1000000003', 'YAW BOATENG');
    const sent = paystack.transfersSent;
    const p = await payout(
      await recipient({ bank_id: gcbId, account_number: '1000000003', account_name: 'Kofi Mensah' }),
    );
    const done = await drive(p.id, (r) => r.status !== 'processing');
    assert.equal(done.status, 'failed');
    assert.match(done.failure_reason!, /name_mismatch/);
    assert.equal(paystack.transfersSent, sent);
  });

  it('a paid transfer that comes back is returned', async () => {
    paystack.setAccount(GCB_PAYSTACK_CODE, '1000000004', 'KOFI A. MENSAH');
    const p = await payout(
      await recipient({ bank_id: gcbId, account_number: '1000000004', account_name: 'Kofi Mensah' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    paystack.settleTransfer(waiting.provider_reference!, 'success');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'paid' ? true : undefined));
    paystack.settleTransfer(waiting.provider_reference!, 'reversed');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'returned' ? true : undefined));
  });

  it('a Telecel wallet through Paystack (mobile_money recipient), paid, then returned when the wallet sends it back', async () => {
    const p = await payout(
      await recipient({ account_type: 'momo', network: 'telecel', phone: '0201112233', account_name: 'Esi Addo' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    assert.equal(waiting.provider, 'paystack');
    assert.equal(paystack.recipients.at(-1)!.type, 'mobile_money');
    paystack.settleTransfer(waiting.provider_reference!, 'success');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'paid' ? true : undefined));
    paystack.settleTransfer(waiting.provider_reference!, 'reversed');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'returned' ? true : undefined));
  });

  it('an AT wallet Paystack fails: the payout fails', async () => {
    const p = await payout(
      await recipient({ account_type: 'momo', network: 'at', phone: '0261112233', account_name: 'Yaa Asantewaa' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    paystack.settleTransfer(waiting.provider_reference!, 'failed', { reason: 'Wallet limit reached' });
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'failed' ? true : undefined));
  });

  it('an MTN wallet through MTN MoMo Disbursement: account holder checked, transfer under the stored X-Reference-Id, paid when MTN says so', async () => {
    const p = await payout(
      await recipient({ account_type: 'momo', network: 'mtn', phone: '0241112233', account_name: 'Ama Owusu' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    assert.equal(waiting.provider, 'mtn_momo');
    const sent = mtn.transactions.get(waiting.provider_reference!)!;
    assert.equal(sent.kind, 'transfer');
    assert.equal(sent.party.partyId, '233241112233');
    assert.equal(sent.amount, '50.00');
    mtn.settle(waiting.provider_reference!, 'SUCCESSFUL');
    const done = await drive(p.id, (r) => r.status !== 'processing');
    assert.equal(done.status, 'paid');
  });

  it('an MTN wallet MTN fails: failed with its reason; an unknown MTN wallet is rejected at the check', async () => {
    mtn.setAccountHolder('233245556677', { name: 'Kwame Asare' });
    const p = await payout(
      await recipient({ account_type: 'momo', network: 'mtn', phone: '0245556677', account_name: 'Kwame Asare' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    mtn.settle(waiting.provider_reference!, 'FAILED', 'PAYEE_NOT_ALLOWED_TO_RECEIVE');
    const failed = await drive(p.id, (r) => r.status !== 'processing');
    assert.equal(failed.status, 'failed');
    const unknown = await payout(
      await recipient({ account_type: 'momo', network: 'mtn', phone: '0249990000', account_name: 'Nobody Here' }),
    );
    const rejected = await drive(unknown.id, (r) => r.status !== 'processing');
    assert.equal(rejected.status, 'failed');
    assert.match(rejected.failure_reason!, /recipient rejected/);
  });

  it('a lost transfer answer is asked about, never sent twice; a pending transfer is asked about on a growing delay', async () => {
    paystack.setAccount(GCB_PAYSTACK_CODE, '1000000005', 'KOFI MENSAH');
    paystack.next({ endpoint: 'transfer.initiate' }, { kind: 'lose_answer' });
    const p = await payout(
      await recipient({ bank_id: gcbId, account_number: '1000000005', account_name: 'Kofi Mensah' }),
    );
    const waiting = await drive(p.id, waitingAtProvider);
    const transfers = paystack.transfers.filter((tr) => tr.reference === waiting.provider_reference);
    assert.equal(transfers.length, 1);
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      await makeDue(p.id);
      await step(p.id);
      const r = await row(p.id);
      assert.equal(r.status, 'processing');
      delays.push(r.next_step_at!.getTime() - Date.now());
    }
    assert.ok(
      delays.every((delay, i) => i === 0 || delay > delays[i - 1]!),
      `delays grow: ${delays}`,
    );
    assert.ok(delays.at(-1)! <= 30 * 60_000);
    assert.equal(paystack.transfers.filter((tr) => tr.reference === waiting.provider_reference).length, 1);
  });
});
