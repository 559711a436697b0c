// The rail registry (src/rails/registry.ts): the database's rail CHECKs allow exactly its rails, and a
// rail added as one descriptor plus one adapter is offered end to end: options, quote, the payer page, an
// attempt through its adapter, its confirmation. The new rail's third file, the migration widening the
// CHECKs, is played here by an ALTER on this file's own database.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import type { Queryable } from '../../src/db/index.ts';
import { LiveProviders, railFor, type AttemptForRail, type CollectionRail } from '../../src/rails/index.ts';
import { railIds, registerRail, type RailDescriptor } from '../../src/rails/registry.ts';
import { buildApp } from '../../src/app.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { createSession, getAttempt, getPublic, getQuote, postAttempt } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { isolatedTestApp } from '../support/webhooks.ts';

const RAIL_TABLES = ['fee_schedules', 'payment_attempts'] as const;
const PASSWORD = 'correct horse battery staple';

/** The rails a table's CHECK on its rail column allows, read from the database's own definition. */
async function railCheck(db: Queryable, table: string): Promise<{ name: string; rails: string[] }> {
  const rows = await db.query<{ name: string; definition: string }>(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
      WHERE conrelid = $1::regclass AND contype = 'c' AND pg_get_constraintdef(oid) ~ '\\mrail\\M'`,
    [table],
  );
  assert.equal(rows.length, 1, `${table} has one CHECK on rail`);
  return {
    name: rows[0]!.name,
    rails: [...rows[0]!.definition.matchAll(/'([^']+)'::text/g)].map((match) => match[1]!),
  };
}

/** Replaces the rail CHECKs; `keepRows` leaves rows of a rail no longer allowed unchecked (NOT VALID). */
async function allowRails(db: Queryable, rails: string[], keepRows = false): Promise<void> {
  for (const table of RAIL_TABLES) {
    const { name } = await railCheck(db, table);
    const list = rails.map((rail) => `'${rail}'`).join(', ');
    await db.query(
      `ALTER TABLE ${table} DROP CONSTRAINT ${name}, ADD CONSTRAINT ${name} CHECK (rail IN (${list}))${keepRows ? ' NOT VALID' : ''}`,
    );
  }
}

describe(`rail registry (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    // Its own database: the test below widens the rail CHECKs, which no other file may see.
    t = await isolatedTestApp();
  });
  after(() => t.close());

  it("the rail CHECKs of fee_schedules and payment_attempts allow exactly the registry's rails", async () => {
    for (const table of RAIL_TABLES)
      assert.deepEqual((await railCheck(t.db, table)).rails.sort(), railIds().sort(), table);
  });

  it('a rail id is lower case and registered once; its removal takes it away', () => {
    const descriptor = { ...walletRail(adapterOf([])), id: 'Bad Id' };
    assert.throws(() => registerRail(descriptor), /must match/);
    assert.throws(() => registerRail({ ...descriptor, id: 'momo' }), /already registered/);
    const remove = registerRail({ ...descriptor, id: 'spare_rail' });
    assert.ok(railIds().includes('spare_rail' as never));
    remove();
    assert.ok(!railIds().includes('spare_rail' as never));
  });

  it('a rail registered as one descriptor and one adapter is offered, quoted, shown, paid through its adapter and confirmed', async (ctx) => {
    const initiated: AttemptForRail[] = [];
    const remove = registerRail(walletRail(adapterOf(initiated)));
    await allowRails(t.db, railIds());
    // An app built once the rail is registered: the attempt's rail enum is read from the registry then.
    const app = await buildApp({ config: t.config, db: t.db, logger: false, payoutRail: null });
    await app.ready();
    const w: TestContext = { ...t, app };
    ctx.after(async () => {
      await app.close();
      remove();
      // Back to the built-in rails for the tests after this one; the attempt stored here stays.
      await allowRails(t.db, railIds(), true);
    });

    const options = (await call(w, 'GET', '/api/v1/checkout/options')).json();
    assert.deepEqual(options.payment_methods.at(-1), { value: 'test_wallet', label: 'Test Wallet' });
    assert.deepEqual(
      options.payment_methods.slice(0, -1).map((method: { value: string }) => method.value),
      ['momo', 'card', 'bank_transfer', 'cash'],
    );

    const m = await w.merchant();
    const session = await createSession(w, m, { amount_minor: 12_345 });
    assert.deepEqual((await getPublic(w, session.id)).json().allowed_rails, [
      'momo',
      'card',
      'bank_transfer',
      'cash',
      'test_wallet',
    ]);
    // 3% of 123.45 is 3.7035: 370 pesewas, borne by the payer as the descriptor says.
    const quote = (await getQuote(w, session.id)).json();
    assert.deepEqual(quote.surcharges.test_wallet, {
      bearer: 'payer',
      fee_minor: 370,
      surcharge_minor: 370,
      total_minor: 12_715,
      currency: 'GHS',
    });
    // Its Live session has no adapter for it, so Live payers never see it.
    const live = await createSession(w, m, {}, { live: true });
    assert.deepEqual((await getPublic(w, live.id)).json().allowed_rails, ['cash']);

    const choose = (await w.app.inject({ method: 'GET', url: `/pay/${session.id}` })).body;
    assert.match(
      choose,
      /<input type="radio" name="rail" value="test_wallet" data-total="12715" data-action="Pay GHS 127.15">\n<span><span class="name">Test Wallet<\/span><span class="sub">Approve in the Test Wallet app<\/span>/,
    );
    assert.match(
      choose,
      /<div class="panel" data-panel="test_wallet" hidden>\n<p>After you continue, approve the payment of GHS 127.15 with Test Wallet\./,
    );

    const started = await postAttempt(w, session.id, { rail: 'test_wallet', amount_minor: 12_715 });
    assert.equal(started.statusCode, 201, started.body);
    const attempt = started.json();
    assert.equal(initiated.length, 1);
    assert.equal(initiated[0]!.rail, 'test_wallet');
    assert.equal(initiated[0]!.amountMinor, 12_715);
    assert.equal(attempt.provider, 'test_wallet_provider');
    assert.equal(attempt.provider_reference, 'TW-1');
    assert.deepEqual(attempt.instructions, {
      mode: 'wallet_approval',
      rail: 'test_wallet',
      amount_minor: 12_715,
      currency: 'GHS',
      approval_code: '4321',
    });

    const waiting = (await w.app.inject({ method: 'GET', url: `/pay/${session.id}` })).body;
    assert.match(waiting, /data-screen="waiting"/);
    assert.match(waiting, /<h2 tabindex="-1">Confirming your Test Wallet payment<\/h2>/);

    // The provider confirms when asked: the refresh goes through its adapter and the session succeeds.
    const refreshed = await getAttempt(w, session.id, attempt.attempt_reference, true);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal(refreshed.json().status, 'paid');
    assert.equal(refreshed.json().session_status, 'success');
    assert.match(
      (await w.app.inject({ method: 'GET', url: `/pay/${session.id}` })).body,
      /<dt>Paid with<\/dt><dd>Test Wallet<\/dd>/,
    );

    // The owner's fee settings list it under its dashboard label, and choosing its bearer changes its quotes.
    const email = `owner-${randomUUID()}@example.com`;
    const shop = await createMerchant(
      w.db,
      { name: `Wallet Shop ${randomUUID().slice(0, 6)}`, email, password: PASSWORD },
      w.webhookTargets,
    );
    const owner = await new ConsoleClient(w).signedIn(email, PASSWORD);
    const settings = await owner.get('/dashboard/settings');
    assert.match(
      settings.body,
      /<tr><td>Test Wallet<\/td><td>3%<\/td><td><label class="muted" for="bearer-test_wallet"[^>]*>Bearer for Test Wallet<\/label>/,
    );
    assert.equal((await owner.post('/dashboard/settings/fees', { bearer_test_wallet: 'merchant' })).statusCode, 200);
    const later = await createSession(w, shop, { amount_minor: 12_345 });
    assert.deepEqual((await getQuote(w, later.id)).json().surcharges.test_wallet, {
      bearer: 'merchant',
      fee_minor: 370,
      surcharge_minor: 0,
      total_minor: 12_345,
      currency: 'GHS',
    });
  });

  it('after its removal the rail is neither offered nor accepted', async () => {
    assert.equal(railFor('test', 'test_wallet' as never, LiveProviders.none()), null);
    const m = await t.merchant();
    const session = await createSession(t, m);
    assert.ok(!(await getPublic(t, session.id)).json().allowed_rails.includes('test_wallet'));
    const refused = await postAttempt(t, session.id, { rail: 'test_wallet', amount_minor: 50_000 });
    assert.equal(refused.statusCode, 400);
    assert.deepEqual(
      refused.json().error.fields.map((fault: { field: string }) => fault.field),
      ['rail'],
    );
  });
});

/** A provider of the test rail: it records what it was asked to start and confirms every payment. */
function adapterOf(initiated: AttemptForRail[]): CollectionRail {
  return {
    provider: 'test_wallet_provider',
    async initiate(attempt) {
      initiated.push(attempt);
      return {
        providerReference: `TW-${initiated.length}`,
        rawStatus: 'SENT',
        verificationRequired: false,
        instructions: { approval_code: '4321' },
      };
    },
    async status() {
      return { rawStatus: 'APPROVED', outcome: 'paid' };
    },
    async authorize() {
      throw new Error('the test wallet needs no code');
    },
    async resend() {
      throw new Error('the test wallet sends no prompt');
    },
  };
}

function walletRail(adapter: CollectionRail): RailDescriptor {
  return {
    id: 'test_wallet',
    labels: { payer: 'Test Wallet', hint: 'Approve in the Test Wallet app', dashboard: 'Test Wallet' },
    defaultFee: { bearer: 'payer', percentBps: 300, flatMinor: 0, capMinor: null },
    payerView: 'confirmation',
    instructions: (attempt) => ({
      mode: 'wallet_approval',
      rail: attempt.rail,
      amount_minor: attempt.amount_charged_minor,
      currency: attempt.currency,
      ...attempt.instructions,
    }),
    adapters: { test: adapter },
  };
}
