// The card-page grace (issue 31, src/checkout/provider-status.ts CARD_PAGE_GRACE_S): Paystack's verify reads
// "abandoned" for a hosted card page from its creation until it is paid, so the background status checks leave a
// card attempt that reads abandoned pending for 30 minutes after it started (the payer may still be typing the
// card) and end it after that (cancelled under watch, the session payable again). Only the card page has this
// grace, and the payer's own return to our page inside it ends the attempt at once. Against the Paystack
// stand-in over real HTTP, time moved by backdating the attempt's created_at (as the other status-check tests do).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import type { AttemptRow } from '../../src/checkout/model.ts';
import { CARD_PAGE_GRACE_S } from '../../src/checkout/provider-status.ts';
import { checkPendingAttempts, STATUS_CHECK_FIRST_AFTER_S } from '../../src/checkout/status-checks.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { railOfAttempt } from '../../src/rails/index.ts';
import type { LiveProviders } from '../../src/rails/live.ts';
import type { MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import type { PaystackStandIn } from '../support/standins/paystack.ts';
import {
  attemptStatus,
  eventually,
  liveSession,
  merchantSession,
  payerAttempt,
  quoteTotal,
  useLiveWithStandIns,
  type LiveApp,
} from '../support/live.ts';

describe('Live: the 30-minute card-page grace of the status checks (Paystack stand-in)', () => {
  let app: LiveApp;
  let paystack: PaystackStandIn;
  let mtn: MtnMomoStandIn;
  let providers: LiveProviders;
  let m: CreatedMerchant;
  useLiveWithStandIns(
    {
      secretKey: 'sk_test_card_page_grace',
      env: { LIVE_PROVIDER_ORDER: 'mtn_momo,paystack', MTN_MOMO_TARGET_ENVIRONMENT: 'mtnghana' },
    },
    async (live) => {
      ({ app, paystack, mtn, providers } = live);
      m = await app.t.merchant();
    },
  );

  /** The attempts this file checks: the worker's pass asks their providers only (another file's attempts on a shared PostgreSQL are left alone). */
  const mine = new Set<string>();
  /** One status-check pass, the attempts of this file due now. */
  async function pass() {
    await app.t.db.query(`UPDATE payment_attempts SET next_status_check_at = NULL WHERE id = ANY($1)`, [[...mine]]);
    return checkPendingAttempts({
      db: app.t.db,
      checkoutUrlHost: app.t.config.checkoutUrlHost,
      providers,
      railOf: (attempt: AttemptRow) => (mine.has(attempt.id) ? railOfAttempt(attempt, providers) : null),
    });
  }
  /** Moves the attempt's start `seconds` into the past. */
  const startedAgo = (attemptId: string, seconds: number) =>
    app.t.db.query(`UPDATE payment_attempts SET created_at = now() - make_interval(secs => $2) WHERE id = $1`, [
      attemptId,
      seconds,
    ]);
  const row = async (attemptId: string) =>
    (
      await app.t.db.query<{
        status: string;
        raw_status: string | null;
        abandoned_at: Date | null;
        status_checks: number;
      }>('SELECT status, raw_status, abandoned_at, status_checks FROM payment_attempts WHERE id = $1', [attemptId])
    )[0]!;

  async function cardAttempt(amountMinor: number) {
    const session = await liveSession(app, m, amountMinor);
    // The quote is read while the session is open (a pending one has none): what a Mobile Money try after it charges.
    const momoTotal = await quoteTotal(app, session.id, 'momo');
    const card = await payerAttempt(app, session.id, { rail: 'card' });
    assert.equal(card.status, 201, card.text);
    assert.equal(card.json.provider, 'paystack');
    mine.add(card.json.attempt_reference);
    return {
      session,
      attemptId: card.json.attempt_reference as string,
      reference: card.json.provider_reference as string,
      momoTotal,
    };
  }

  it('a card attempt Paystack reads as abandoned is left pending by the status checks within 30 minutes, and ended after: cancelled under watch, the session payable again', async () => {
    assert.equal(CARD_PAGE_GRACE_S, 30 * 60, 'the grace the issue asks for');
    const { session, attemptId, reference, momoTotal } = await cardAttempt(8_000);
    assert.equal(paystack.charge(reference)!.status, 'initialized', 'the payer has not finished the card page');

    // One minute before the grace ends (well past the first check at 5 minutes): asked, and left alone.
    await startedAgo(attemptId, CARD_PAGE_GRACE_S - 60);
    const verifiesBefore = paystack.count('transaction.verify');
    assert.equal(await pass(), 0);
    assert.equal(paystack.count('transaction.verify'), verifiesBefore + 1, 'the check asked Paystack');
    const within = await row(attemptId);
    assert.equal(within.status, 'pending', 'the payer may still be on the card page');
    assert.equal(within.raw_status, 'abandoned', "Paystack's answer is recorded");
    assert.equal(within.abandoned_at, null);
    assert.equal(within.status_checks, 1);
    const mtnBody = { rail: 'momo', operator: 'mtn', phone: '0241234567', amount_minor: momoTotal };
    const blocked = await payerAttempt(app, session.id, mtnBody);
    assert.equal(blocked.status, 409, 'the card attempt still holds the session');
    assert.equal(blocked.json.error.code, 'PAYMENT_ATTEMPT_PENDING');

    // One minute after: the next check ends it.
    await startedAgo(attemptId, CARD_PAGE_GRACE_S + 60);
    assert.equal(await pass(), 1);
    assert.equal(paystack.count('transaction.verify'), verifiesBefore + 2);
    const ended = await row(attemptId);
    assert.equal(ended.status, 'cancelled');
    assert.equal(ended.raw_status, 'abandoned');
    assert.ok(ended.abandoned_at, 'kept under watch: a late success would still be applied');
    const view = (await attemptStatus(app, session.id, attemptId, false)).json;
    assert.equal(view.status, 'cancelled');
    assert.equal(view.session_status, 'open');

    // Payable again: Mobile Money pays the session.
    const momo = await payerAttempt(app, session.id, mtnBody);
    assert.equal(momo.status, 201, momo.text);
    mtn.settle(momo.json.provider_reference, 'SUCCESSFUL');
    const paid = await eventually(async () => {
      const s = (await attemptStatus(app, session.id, momo.json.attempt_reference)).json;
      return s.status === 'paid' ? s : undefined;
    });
    assert.equal(paid.session_status, 'success');
    assert.equal((await merchantSession(app, m, session.id)).json.status, 'success');
    assert.deepEqual(await checkInvariants(app.t.db, m.merchant_id), []);
  });

  it('a card attempt past the first check but just inside the grace is left alone even after several checks', async () => {
    const { attemptId } = await cardAttempt(6_000);
    for (const ago of [STATUS_CHECK_FIRST_AFTER_S + 1, 15 * 60, CARD_PAGE_GRACE_S - 5]) {
      await startedAgo(attemptId, ago);
      assert.equal(await pass(), 0, `${ago} s after it started`);
      assert.equal((await row(attemptId)).status, 'pending', `${ago} s after it started`);
    }
    assert.equal((await row(attemptId)).status_checks, 3);
  });

  it("the grace is the background checks' only: the payer's own return to our page inside it ends the card attempt at once", async () => {
    const { session, attemptId } = await cardAttempt(5_000);
    await startedAgo(attemptId, 10 * 60);
    assert.equal(await pass(), 0, 'the status checks leave it');
    assert.equal((await row(attemptId)).status, 'pending');
    // Back on our page (?attempt=...): the page's refresh asks Paystack, whose "abandoned" ends it.
    const back = (await attemptStatus(app, session.id, attemptId)).json;
    assert.equal(back.status, 'cancelled');
    assert.equal(back.session_status, 'open');
    assert.ok((await row(attemptId)).abandoned_at, 'kept under watch');
  });
});
