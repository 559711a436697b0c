// A settlement that failed or came back (issue 34): its money is available again (the payout's own void or
// return did that), the schedule pauses so nothing is sent again to an account that refuses it, and the
// owner is told by e-mail; the dashboard shows the pause as a banner until the schedule is saved again.
import type { Queryable } from '../db/index.ts';
import { plainMailBodies } from '../mail/compose.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { formatGhs } from '../lib/ghana.ts';
import type { PayoutRow } from './payout-store.ts';
import { merchantEmail } from './settlement-run-store.ts';
import { pauseSchedule } from './settlement-schedule-store.ts';

/** In the transaction that moved the settlement to failed or returned. */
export async function settlementFailed(tx: Queryable, payout: PayoutRow): Promise<void> {
  const what = payout.status === 'returned' ? 'was returned by the receiving account' : 'failed';
  const detail = payout.failure_reason ? ` (${payout.failure_reason})` : '';
  const reason = `Settlement ${payout.reference} ${what}${detail}. Its money is back in your available balance; check the settlement account, then save the schedule to resume.`;
  await pauseSchedule(tx, payout.merchant_id, payout.environment, reason, payout.id);
  const to = await merchantEmail(tx, payout.merchant_id);
  if (!to) return;
  const env = payout.environment === 'live' ? '' : ' (Test)';
  const subject = `Your settlement ${what === 'failed' ? 'failed' : 'was returned'}: automatic settlements are paused${env}`;
  await enqueueMail(tx, {
    kind: 'settlement.failed',
    to,
    subject,
    merchantId: payout.merchant_id,
    ...plainMailBodies({
      paragraphs: [
        `Your settlement ${payout.reference} of ${formatGhs(payout.amount_minor)}${env} ${what}${detail}.`,
        'The money is back in your available balance, and automatic settlements are paused so nothing else is sent to that account.',
        'Check the settlement account in the Settlements page of your dashboard, then save the schedule to resume.',
      ],
    }),
  });
}
