// The bench's fixtures, written in-process before a server starts (embedded storage allows one process
// per data dir): a merchant for the checkout scenarios whose Test key is paired with the bench's webhook
// receiver, and ten funded payout merchants, each with a Test recipient and a history of payouts.
import { randomUUID } from 'node:crypto';
import { createMerchant } from '../src/accounts/service.ts';
import { loadConfig } from '../src/config/index.ts';
import { openDb, type Db } from '../src/db/index.ts';
import { buildApp } from '../src/app.ts';
import { creditPayment } from '../src/ledger/service.ts';
import { setPayoutAccess } from '../src/payouts/settings.ts';

export const PAYOUT_MERCHANTS = 10;
const PAYOUT_FUNDS_MINOR = 1_000_000_000_000; // GH₵10 billion: no run can drain it
const PAYOUT_LIMIT_MINOR = 1_000_000_000_000;
/** Payouts each payout merchant has already made, as a running merchant has a history. */
const PAYOUT_HISTORY = 50;

export interface Fixtures {
  checkout: { merchantId: string; testKey: string; testKeyId: string };
  payouts: { merchantId: string; testKey: string; recipientId: string }[];
}

export async function writeFixtures(
  storage: { databaseUrl: string | null; dataDir: string | null },
  receiverUrl: string,
  stamp: string,
): Promise<Fixtures> {
  // The bench's receiver is on this machine, as is its server (BASE_URL loopback: private targets allowed).
  const webhookTargets = { allowPrivateTargets: true };
  const db = await openDb(storage);
  try {
    const checkout = await createMerchant(
      db,
      {
        name: 'Bench Checkout',
        email: `bench-checkout-${stamp}@example.com`,
        webhookUrl: receiverUrl,
        payoutApproval: false,
      },
      webhookTargets,
    );
    const payouts: Fixtures['payouts'] = [];
    const app = await buildApp({
      config: loadConfig({
        ...process.env,
        DATABASE_URL: storage.databaseUrl ?? '',
        DATA_DIR: storage.dataDir ?? '',
        LOG_LEVEL: 'silent',
        WORKERS: 'off',
        REDIS_URL: '',
      }),
      db,
      logger: false,
    });
    try {
      for (let i = 0; i < PAYOUT_MERCHANTS; i++) {
        const m = await createMerchant(
          db,
          {
            name: `Bench Payouts ${i + 1}`,
            email: `bench-payouts-${i}-${stamp}@example.com`,
            webhookUrl: receiverUrl,
            payoutApproval: false,
          },
          webhookTargets,
        );
        await setPayoutAccess(db, m.merchant_id, 'test', {
          payout_access: true,
          payout_limit_minor: PAYOUT_LIMIT_MINOR,
          daily_limit_minor: PAYOUT_LIMIT_MINOR,
        });
        await fund(db, m.merchant_id);
        const res = await app.inject({
          method: 'POST',
          url: '/api/v1/payouts/recipients',
          headers: { authorization: `Bearer ${m.test_api_key}`, 'content-type': 'application/json' },
          payload: JSON.stringify({
            account_type: 'momo',
            network: 'mtn',
            phone: '0241234567',
            account_name: 'Ama Owusu',
          }),
        });
        if (res.statusCode !== 201)
          throw new Error(`creating a bench recipient answered ${res.statusCode}: ${res.body}`);
        const recipientId = (res.json() as { id: string }).id;
        for (let n = 0; n < PAYOUT_HISTORY; n++) {
          const paid = await app.inject({
            method: 'POST',
            url: '/api/v1/payouts',
            headers: { authorization: `Bearer ${m.test_api_key}`, 'content-type': 'application/json' },
            payload: JSON.stringify({
              recipient_id: recipientId,
              amount_minor: 100,
              client_reference: `history-${stamp}-${n}`,
            }),
          });
          if (paid.statusCode !== 201)
            throw new Error(`creating a bench payout answered ${paid.statusCode}: ${paid.body}`);
        }
        payouts.push({ merchantId: m.merchant_id, testKey: m.test_api_key, recipientId });
      }
    } finally {
      await app.close();
    }
    // Statistics, as autovacuum keeps them on a running database (a fresh one has none for its first
    // minute, and the planner then guesses: e.g. it finds a payout by client_reference through the
    // merchant's list index, scanning every payout of the merchant).
    if (storage.databaseUrl) await db.exec('ANALYZE');
    const [key] = await db.query<{ id: string }>(
      "SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'test'",
      [checkout.merchant_id],
    );
    return {
      checkout: { merchantId: checkout.merchant_id, testKey: checkout.test_api_key, testKeyId: key!.id },
      payouts,
    };
  } finally {
    await db.close();
  }
}

async function fund(db: Db, merchantId: string): Promise<void> {
  await db.transaction((tx) =>
    creditPayment(tx, {
      merchantId,
      environment: 'test',
      paymentId: `bench-fund-${randomUUID()}`,
      chargedMinor: PAYOUT_FUNDS_MINOR,
      payerFeeMinor: 0,
      merchantFeeMinor: 0,
    }),
  );
}
