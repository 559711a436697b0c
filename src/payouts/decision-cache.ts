// What a payout decision reads that seldom changes (the settings, the paired endpoint, the approval
// setting, the key's creator, the recipient, the ledger account ids), remembered for a few seconds per
// API key and recipient so that a merchant's next payouts skip the read. It is never trusted on its own:
// the write re-checks every remembered fact as it is at that moment (insertNewPayout), balances and
// the day's total are left to the database's CHECKs, and a write that finds anything changed forgets the
// entry and decides again from a fresh read.
import type { AccountRow } from '../ledger/service.ts';
import { ExpiringMap } from '../lib/expiring-map.ts';
import type { RecipientRow } from './recipient-store.ts';
import type { SettingsRow } from './settings-store.ts';

export interface RememberedDecision {
  settings: SettingsRow;
  approval_required: boolean;
  key_creator_user_id: string | null;
  /** Active and verified or awaiting a Live check: never one waiting for the Test verifier or rejected. */
  recipient: RecipientRow;
  /** Every account the payout posts to (ids and kinds; the balances are not used). */
  accounts: AccountRow[];
}

const TTL_MS = 5_000;
const ENTRIES_MAX = 10_000;

export class PayoutDecisionCache {
  private readonly entries = new ExpiringMap<string, RememberedDecision>(TTL_MS, ENTRIES_MAX);

  get(apiKeyId: string, recipientId: string): RememberedDecision | null {
    return this.entries.get(keyOf(apiKeyId, recipientId)) ?? null;
  }

  remember(apiKeyId: string, recipientId: string, decision: RememberedDecision): void {
    this.entries.set(keyOf(apiKeyId, recipientId), decision);
  }

  forget(apiKeyId: string, recipientId: string): void {
    this.entries.delete(keyOf(apiKeyId, recipientId));
  }
}

const keyOf = (apiKeyId: string, recipientId: string) => `${apiKeyId} ${recipientId}`;
