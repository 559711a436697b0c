// Whether a merchant may do Live work now (issue 33): only once approved, and never while suspended. Asked on
// every Live API call and Live payer step, so each process keeps each merchant's answer briefly and drops it
// the moment any process changes it: migration 036's trigger NOTIFYs sika_merchant_activation_changed with the
// merchant id at commit, the same way API key revocations travel (api-keys.ts, migration 015).
import type { Db } from '../db/index.ts';
import type { Subscription } from '../db/types.ts';
import { ExpiringMap } from '../lib/expiring-map.ts';
import { SikaError } from '../lib/errors.ts';
import type { ActivationStatus } from './activation-model.ts';
import { findActivation } from './activation-store.ts';

/** The promise: a suspension is refused by every process within this time (issue 33). */
export const SUSPENSION_EFFECTIVE_MS = 1_000;
/** Half the promise, so even a notification lost unnoticed cannot keep a suspended merchant open for longer. */
const CACHE_TTL_MS = SUSPENSION_EFFECTIVE_MS / 2;
const CACHE_ENTRIES_MAX = 10_000;
export const ACTIVATION_CHANGED_CHANNEL = 'sika_merchant_activation_changed';

export interface LiveStanding {
  status: ActivationStatus;
  suspended: boolean;
}

export type LiveRefusalCode = 'ACCOUNT_NOT_ACTIVATED' | 'ACCOUNT_SUSPENDED';

/** Why a merchant in this standing may not do Live work, or null when it may. Suspension is said first. */
export function liveRefusal(standing: LiveStanding): LiveRefusalCode | null {
  if (standing.suspended) return 'ACCOUNT_SUSPENDED';
  if (standing.status !== 'approved') return 'ACCOUNT_NOT_ACTIVATED';
  return null;
}

export const liveRefusalError = (code: LiveRefusalCode): SikaError =>
  code === 'ACCOUNT_SUSPENDED'
    ? new SikaError(code, 'This account is suspended: Live calls are refused. Test keys keep working.')
    : new SikaError(
        code,
        'This account is not activated for Live yet: submit the Go-Live application in the dashboard and wait for approval. Test keys work meanwhile.',
      );

/**
 * Each merchant's standing, cached for CACHE_TTL_MS only while this process hears the changes (start()); a
 * change heard drops the merchant, a gap in hearing drops them all (the reset handler).
 */
export class LiveAccessGate {
  private readonly cache = new ExpiringMap<string, LiveStanding | null>(CACHE_TTL_MS, CACHE_ENTRIES_MAX);
  private changes: Subscription | null = null;
  /** Grows with every change heard and every gap: a read that overlapped one is used but not kept. */
  private generation = 0;

  constructor(private readonly db: Db) {}

  async start(): Promise<void> {
    this.changes = await this.db.listen(ACTIVATION_CHANGED_CHANNEL, {
      message: (merchantId) => {
        this.generation++;
        this.cache.delete(merchantId);
      },
      reset: () => {
        this.generation++;
        this.cache.clear();
      },
    });
  }

  async stop(): Promise<void> {
    const changes = this.changes;
    this.changes = null;
    await changes?.close();
  }

  /** The merchant's standing now (null: no such merchant). */
  async standing(merchantId: string): Promise<LiveStanding | null> {
    const trusted = this.changes?.live === true;
    const cached = trusted ? this.cache.get(merchantId) : undefined;
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const row = await findActivation(this.db, merchantId);
    const standing = row ? { status: row.activation_status, suspended: row.suspended_at !== null } : null;
    if (trusted && generation === this.generation && this.changes?.live) this.cache.set(merchantId, standing);
    return standing;
  }

  /** Throws ACCOUNT_SUSPENDED or ACCOUNT_NOT_ACTIVATED (403) unless the merchant may do Live work now. */
  async assertLiveAllowed(merchantId: string): Promise<void> {
    const standing = await this.standing(merchantId);
    const refusal = standing ? liveRefusal(standing) : 'ACCOUNT_NOT_ACTIVATED';
    if (refusal) throw liveRefusalError(refusal);
  }
}
