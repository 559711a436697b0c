// The ledger's statement API: the only way another module writes journal lines or reads balances inside a
// statement of its own (a new payout is written, with its day's total, journal entry and event, in one
// statement: src/payouts/new-payout-store.ts). The entries come planned by the ledger's service
// (planNewPayout); the SQL fragments are the ledger's store's, re-exported here so no other domain
// imports that store (test/architecture/layering.test.ts).
export {
  accountsJsonItem,
  checkWritten,
  entriesCtes,
  ledgerWriteError,
  merchantBalanceItem,
  WRITTEN_COUNTS,
  type AccountRow,
  type NewEntry,
  type NewLine,
  type WrittenCounts,
} from './store.ts';
