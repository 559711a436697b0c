// CLEARING_DAYS (issue 34): the deployment's Live clearing time per rail, read and checked at start like every
// setting (one clear error per bad value), the ledger's defaults when unset, and handed to the ledger by
// buildApp so that the payments this process credits clear after it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import { CLEARING_DAYS_DEFAULT, ConfigError, loadConfig } from '../../src/config/index.ts';
import {
  CLEARING_DAYS_MAX,
  configureClearingDefaults,
  DEFAULT_LIVE_CLEARING_DAYS,
  effectiveClearing,
} from '../../src/ledger/clearing.ts';
import { railIds } from '../../src/rails/registry.ts';
import { startTestApp } from '../support/helpers.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

describe('CLEARING_DAYS', () => {
  it("defaults to the ledger's Live clearing times, one per rail of the registry", () => {
    assert.deepEqual(loadConfig({}).clearingDays, { ...DEFAULT_LIVE_CLEARING_DAYS });
    assert.deepEqual(loadConfig({ CLEARING_DAYS: '' }).clearingDays, { ...DEFAULT_LIVE_CLEARING_DAYS });
    // The config folder may not import the ledger or the rails: its copy is kept equal to both here.
    assert.deepEqual({ ...CLEARING_DAYS_DEFAULT }, { ...DEFAULT_LIVE_CLEARING_DAYS });
    assert.deepEqual(Object.keys(CLEARING_DAYS_DEFAULT).sort(), [...railIds()].sort());
  });

  it('takes rail=days pairs; rails left out keep their default; 0 is at once', () => {
    assert.deepEqual(loadConfig({ CLEARING_DAYS: 'momo=1,card=2,bank_transfer=0,cash=0' }).clearingDays, {
      momo: 1,
      card: 2,
      bank_transfer: 0,
      cash: 0,
    });
    assert.deepEqual(loadConfig({ CLEARING_DAYS: ' card = 3 , momo=0 ' }).clearingDays, {
      ...DEFAULT_LIVE_CLEARING_DAYS,
      card: 3,
      momo: 0,
    });
    assert.deepEqual(loadConfig({ CLEARING_DAYS: `cash=${CLEARING_DAYS_MAX}` }).clearingDays, {
      ...DEFAULT_LIVE_CLEARING_DAYS,
      cash: CLEARING_DAYS_MAX,
    });
  });

  it('refuses an unknown rail, days above 30, a negative or written-out number, a rail twice and a bad shape, one clear error each', () => {
    const cases: [string, RegExp][] = [
      [
        'momo=1,paypal=2',
        /^CLEARING_DAYS names an unknown rail "paypal"; the rails are momo, card, bank_transfer, cash$/,
      ],
      [`card=${CLEARING_DAYS_MAX + 1}`, /^CLEARING_DAYS gives card 31 days; a clearing time is 0 to 30 business days$/],
      ['momo=-1', /^CLEARING_DAYS must be rail=days pairs separated by commas, like momo=1,card=2/],
      ['momo=one', /^CLEARING_DAYS must be rail=days pairs/],
      ['momo=1.5', /^CLEARING_DAYS must be rail=days pairs/],
      ['momo', /^CLEARING_DAYS must be rail=days pairs/],
      ['momo=1;card=2', /^CLEARING_DAYS must be rail=days pairs/],
      ['momo=1,,card=2', /^CLEARING_DAYS must be rail=days pairs/],
      ['momo=1,momo=2', /^CLEARING_DAYS names momo twice$/],
    ];
    for (const [value, expected] of cases) {
      const problems = problemsOf({ CLEARING_DAYS: value });
      assert.equal(problems.length, 1, `${value}: ${problems.join(' | ')}`);
      assert.match(problems[0]!, expected, value);
    }
  });

  it("buildApp hands the setting to the ledger: a merchant's Live clearing follows it, Test clears at once", async () => {
    const t = await startTestApp({ CLEARING_DAYS: 'momo=3,card=5' });
    try {
      const merchant = await createMerchant(
        t.db,
        { name: 'Clearing setting shop', email: `clearing-${randomUUID()}@example.com`, webhookUrl: null },
        t.webhookTargets,
      );
      const live = await effectiveClearing(t.db, merchant.merchant_id, 'live');
      assert.deepEqual(live.days, { momo: 3, card: 5, bank_transfer: 0, cash: 0 });
      assert.deepEqual(live.overrides, {});
      const test = await effectiveClearing(t.db, merchant.merchant_id, 'test');
      assert.deepEqual(test.days, { momo: 0, card: 0, bank_transfer: 0, cash: 0 });
    } finally {
      await t.close();
      configureClearingDefaults({});
    }
  });
});
