// The outbox's statement API: the CTEs that write events and their deliveries, for a writer whose change and
// event are one statement (src/payouts/new-payout-store.ts), re-exported so no other domain imports the
// events' store (test/architecture/layering.test.ts).
export { eventCtes } from './outbox-store.ts';
export { DELIVERIES_DUE_CHANNEL } from './model.ts';
