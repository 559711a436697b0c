// Issue 34 over HTTP on both storages: a payment clears by its rail in Africa/Accra business days, a daily
// schedule settles the available balance once per period (POST /api/v1/test/settlements/run rehearsing it),
// the settlement lists exactly what it paid out, the reserve keeps its part and releases it, a returned
// settlement pauses the schedule and tells the owner, and the clock never moves backwards.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accraDay, clearingInstant } from '../../src/lib/accra-calendar.ts';
import { upsertClearingSettings } from '../../src/ledger/clearing.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { storageKind } from '../support/helpers.ts';
import type { TestContext } from '../support/helpers.ts';
import {
  api,
  bankRecipient,
  balanceOf,
  fundThroughCheckout,
  merchantWithHooks,
  verifyRecipientsNow,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** A card payment of 10,000 pesewas leaves the merchant 9,750 (card: 2.5% merchant-borne). */
const PAID_MINOR = 10_000;
const NET_MINOR = 9_750;

interface SettlementJson {
  id: string;
  type: string;
  status: string;
  amount_minor: number;
  fee_minor: number;
  settlement: { period_start: string | null; period_end: string } | null;
}

async function rehearse(t: TestContext, key: string, asOf: Date) {
  return api(t, key, 'POST', '/api/v1/test/settlements/run', { as_of: asOf.toISOString() });
}

async function settled(t: TestContext, key: string, asOf: Date): Promise<SettlementJson[]> {
  const res = await rehearse(t, key, asOf);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** A merchant with a verified bank recipient and a daily schedule paying it. */
async function dailyMerchant(t: TestContext) {
  const m = await merchantWithHooks(t);
  const recipient = await bankRecipient(t, m.test_api_key);
  await verifyRecipientsNow(t, recipient.id);
  const saved = await api(t, m.test_api_key, 'POST', '/api/v1/settlements/schedule', {
    interval: 'daily',
    recipient_id: recipient.id,
  });
  assert.equal(saved.statusCode, 200, saved.body);
  return { m, recipient, schedule: saved.json() as { next_run_at: string } };
}

/** The balance transactions a settlement paid out, every page. */
async function transactionsOf(t: TestContext, key: string, payoutId: string) {
  const rows: { type: string; net_minor: number; source: { id: string } }[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await api(
      t,
      key,
      'GET',
      `/api/v1/balance/transactions?payout_id=${payoutId}&limit=100${after ? `&starting_after=${after}` : ''}`,
    );
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    rows.push(...page.data);
    if (!page.has_more) return rows;
    after = page.data.at(-1).id;
  }
}

const sum = (rows: readonly { net_minor: number }[]) => rows.reduce((total, row) => total + row.net_minor, 0);

describe(`settlement run (${storageKind})`, () => {
  const { t } = usePayoutApp();

  it('Test clearing: a card payment is pending for two business days, then one daily settlement pays exactly it', async () => {
    const { m } = await dailyMerchant(t);
    // Test clearing rehearses the Live times; the suite's deployment clears at once, so card's two days are an override.
    await upsertClearingSettings(t.db, m.merchant_id, 'test', { test_clearing: true, clearing_days: { card: 2 } });
    const paidAt = new Date();
    await fundThroughCheckout(t, m.test_api_key, PAID_MINOR);
    const availableOn = clearingInstant(paidAt, 2);

    const before = await balanceOf(t, m.merchant_id, 'test');
    assert.equal(before.pending_minor, NET_MINOR);
    assert.equal(before.available_minor, 0, 'pending money is not available');
    const [row] = (await api(t, m.test_api_key, 'GET', '/api/v1/balance/transactions')).json().data;
    assert.equal(row.type, 'payment');
    assert.equal(row.status, 'pending');
    assert.equal(new Date(row.available_on).getTime(), availableOn.getTime());

    // A payout cannot spend pending money.
    const recipient = await bankRecipient(t, m.test_api_key, '2234567890');
    const refused = await api(t, m.test_api_key, 'POST', '/api/v1/payouts', {
      recipient_id: recipient.id,
      amount_minor: 100,
      client_reference: `pending-${m.merchant_id}`,
    });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().error.code, 'INSUFFICIENT_FUNDS');

    // The day before it clears: the daily runs find nothing available.
    assert.deepEqual(await settled(t, m.test_api_key, new Date(availableOn.getTime() - HOUR_MS)), []);
    // Its clearing day at 11:00 Africa/Accra: the 10:00 run settles it.
    const made = await settled(t, m.test_api_key, new Date(availableOn.getTime() + 11 * HOUR_MS));
    assert.equal(made.length, 1, JSON.stringify(made));
    const [settlement] = made;
    assert.equal(settlement!.type, 'settlement');
    assert.equal(settlement!.status, 'paid');
    assert.equal(settlement!.amount_minor, NET_MINOR);
    assert.equal(settlement!.fee_minor, 0);
    assert.equal(accraDay(new Date(settlement!.settlement!.period_end)), accraDay(availableOn));

    const paidOut = await transactionsOf(t, m.test_api_key, settlement!.id);
    assert.deepEqual(
      paidOut.map((r) => r.type),
      ['payment'],
    );
    assert.equal(sum(paidOut), settlement!.amount_minor);
    const after = await balanceOf(t, m.merchant_id, 'test');
    assert.equal(after.available_minor + after.pending_minor, 0);

    // The same instant again, and a later one on the same day: no second settlement of the period.
    assert.deepEqual(await settled(t, m.test_api_key, new Date(availableOn.getTime() + 11 * HOUR_MS)), []);
    assert.deepEqual(await settled(t, m.test_api_key, new Date(availableOn.getTime() + 12 * HOUR_MS)), []);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('the clock never moves backwards, and a Live key may not rehearse', async () => {
    const { m } = await dailyMerchant(t);
    const later = new Date(Date.now() + 3 * DAY_MS);
    assert.equal((await rehearse(t, m.test_api_key, later)).statusCode, 200);
    const back = await rehearse(t, m.test_api_key, new Date(later.getTime() - 1));
    assert.equal(back.statusCode, 409, back.body);
    assert.equal(back.json().error.code, 'SETTLEMENT_CLOCK_BACKWARDS');
    assert.equal((await rehearse(t, m.test_api_key, later)).statusCode, 200, 'the same instant is not backwards');
    const live = await rehearse(t, m.live_api_key, later);
    assert.equal(live.statusCode, 403, live.body);
    const bad = await api(t, m.test_api_key, 'POST', '/api/v1/test/settlements/run', { as_of: 'tomorrow' });
    assert.equal(bad.statusCode, 400, bad.body);
  });

  it('the reserve keeps its part of each credit, shows as reserved_minor, and is released into a later settlement', async () => {
    const { m } = await dailyMerchant(t);
    await upsertClearingSettings(t.db, m.merchant_id, 'test', { reserve_bp: 1_000, reserve_days: 7 });
    await fundThroughCheckout(t, m.test_api_key, PAID_MINOR);
    const reserve = Math.floor(NET_MINOR / 10);

    const first = await settled(t, m.test_api_key, new Date(Date.now() + 2 * DAY_MS));
    assert.equal(first.length, 1, JSON.stringify(first));
    assert.equal(first[0]!.amount_minor, NET_MINOR - reserve);
    const firstRows = await transactionsOf(t, m.test_api_key, first[0]!.id);
    assert.deepEqual(firstRows.map((r) => r.type).sort(), ['payment', 'reserve']);
    assert.equal(sum(firstRows), first[0]!.amount_minor);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).reserved_minor, reserve);

    const second = await settled(t, m.test_api_key, new Date(Date.now() + 12 * DAY_MS));
    assert.equal(second.length, 1, JSON.stringify(second));
    assert.equal(second[0]!.amount_minor, reserve);
    const secondRows = await transactionsOf(t, m.test_api_key, second[0]!.id);
    assert.deepEqual(
      secondRows.map((r) => r.type),
      ['reserve_release'],
    );
    const end = await balanceOf(t, m.merchant_id, 'test');
    assert.equal(end.reserved_minor, 0);
    assert.equal(end.available_minor, 0);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a returned settlement pauses the schedule, mails the owner, keeps the money available, and saving resumes', async () => {
    const { m } = await dailyMerchant(t);
    await fundThroughCheckout(t, m.test_api_key, PAID_MINOR);
    const [settlement] = await settled(t, m.test_api_key, new Date(Date.now() + 2 * DAY_MS));
    assert.ok(settlement);
    const returned = await api(t, m.test_api_key, 'POST', `/api/v1/test/payouts/${settlement.id}/simulate`, {
      outcome: 'returned',
    });
    assert.equal(returned.statusCode, 200, returned.body);

    const schedule = (await api(t, m.test_api_key, 'GET', '/api/v1/settlements/schedule')).json();
    assert.equal(schedule.paused, true);
    assert.equal(schedule.paused_payout_id, settlement.id);
    assert.equal(schedule.next_run_at, null);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, NET_MINOR);
    const mails = await t.db.query<{ kind: string; subject: string }>(
      "SELECT kind, subject FROM mail_outbox WHERE merchant_id = $1 AND kind = 'settlement.failed'",
      [m.merchant_id],
    );
    assert.equal(mails.length, 1);

    // Paused: nothing more is sent.
    assert.deepEqual(await settled(t, m.test_api_key, new Date(Date.now() + 5 * DAY_MS)), []);
    // Saving the schedule resumes it; the next run pays the money that came back.
    const resumed = await api(t, m.test_api_key, 'POST', '/api/v1/settlements/schedule', {});
    assert.equal(resumed.statusCode, 200, resumed.body);
    assert.equal(resumed.json().paused, false);
    const again = await settled(t, m.test_api_key, new Date(Date.now() + 9 * DAY_MS));
    assert.equal(again.length, 1, JSON.stringify(again));
    assert.equal(again[0]!.amount_minor, NET_MINOR);
    const rows = await transactionsOf(t, m.test_api_key, again[0]!.id);
    assert.deepEqual(
      rows.map((r) => r.type),
      ['payout_return'],
    );
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });
});
