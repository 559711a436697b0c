// Writing an SMS: one row in sms_outbox, in the caller's transaction, so a message exists exactly when what
// caused it committed. The send-sms worker (src/sms/delivery.ts) sends it later through the configured provider.
import type { Queryable } from '../db/index.ts';
import { newId } from '../lib/ids.ts';
import { insertSms } from './store.ts';

export interface OutgoingSms {
  /** What the message is about, for the console and the tests: 'receipt.sms', … */
  kind: string;
  /** The payer's number in international form without the plus: '233' and 9 digits (migration 040 checks it). */
  to: string;
  /** The text, at most 480 characters (three concatenated SMS parts). */
  body: string;
  merchantId?: string | null;
}

/** Queues an SMS in tx; answers its id (sms_…). */
export async function enqueueSms(tx: Queryable, sms: OutgoingSms): Promise<string> {
  const id = newId('sms');
  await insertSms(tx, { ...sms, id, merchantId: sms.merchantId ?? null });
  return id;
}
