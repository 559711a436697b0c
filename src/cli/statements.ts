// sika statements import: a bank statement CSV of the collection account, matched to Live bank transfers
// (docs/bank-statements.md).
import { readFile, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { setDuplicatePaymentRefund } from '../checkout/duplicate-refund.ts';
import { configureClearingDefaults } from '../ops/clearing-settings.ts';
import { collectionAccounts } from '../rails/bank-transfer/accounts.ts';
import { STATEMENT_BYTES_MAX } from '../statements/model.ts';
import { refundDuplicatePayment } from '../refunds/sika-refunds.ts';
import { importStatement } from '../statements/service.ts';
import { JSON_OPTION, str, UsageError, type CommandSpec } from './common.ts';

export const STATEMENTS_USAGE = `usage: sika statements import FILE --bank CODE [--columns MAPPING] [--force-reason TEXT] [--json]

Imports a bank statement of the bank transfer collection account, exported from the bank as CSV, and
matches each credit to the Live bank transfer whose payment reference (SK and 8 characters) is in its
narration or reference: the exact amount pays it, another amount holds it for review, and a credit that
matches no payment waits in the console's unmatched queue (/ops/statements). Debits are left out. A row
that cannot be read is reported with its line number; the others are imported. A file imported before
(the same content, for any account) is refused unless --force-reason says why it must be imported again;
even then a credit already recorded is not recorded twice (each line has a fingerprint). Statements are
imported for the configured collection account (BANK_TRANSFER_* settings) only. The console takes files
up to 5 MB; this command takes them up to ${STATEMENT_BYTES_MAX / (1024 * 1024)} MB.

options:
  --bank CODE        the bank the statement is from, by its code in the console's Banks (e.g. GCB)
  --columns MAPPING  which column is which, when the headers are not recognised, by header name or
                     position from 1: date=Txn Date,credit=Amount In,description=Details
                     (fields: date, description, credit, debit, amount, type, balance, reference)
  --force-reason TEXT  import a file imported before anyway, for this reason (kept and audited)
  --json             the result as JSON

The CSV format, the headers recognised and the matching rules: docs/bank-statements.md.`;

export const STATEMENTS_IMPORT: CommandSpec = {
  name: 'statements import',
  synopsis: 'FILE --bank CODE [--columns MAPPING] [--force-reason TEXT] [--json]',
  summary:
    'Imports a bank statement (CSV) of the bank transfer collection account and matches its credits\n      to Live bank transfers by payment reference and amount (sika statements import --help for more).',
  help: STATEMENTS_USAGE,
  options: {
    bank: { type: 'string', value: 'CODE', description: 'the bank the statement is from' },
    columns: { type: 'string', value: 'MAPPING', description: 'which column is which' },
    'force-reason': {
      type: 'string',
      value: 'TEXT',
      description: 'import a file imported before anyway, for this reason',
    },
    json: JSON_OPTION,
  },
  positionals: 1,
  async run(values, positionals, io) {
    const [file] = positionals;
    if (!file) throw new UsageError('statements import takes one statement FILE', 'statements import');
    const bank = str(values.bank);
    if (!bank)
      throw new UsageError(
        'statements import needs --bank CODE (the bank the statement is from, e.g. GCB)',
        'statements import',
      );
    const path = resolve(io.cwd, file);
    // A statement line can pay a session another payment had paid: refunded in the import's transaction.
    setDuplicatePaymentRefund(refundDuplicatePayment);
    // Its credits clear after the deployment's times (CLEARING_DAYS of this shell; src/ledger/clearing.ts).
    configureClearingDefaults(io.config().clearingDays);
    // Read before opening storage: the embedded data dir is held for as long as it is open.
    const size = await stat(path).then(
      (s) => s.size,
      (error: NodeJS.ErrnoException) => {
        throw new Error(`cannot read ${file} (${error.code ?? error.message})`);
      },
    );
    if (size > STATEMENT_BYTES_MAX)
      throw new Error(`${file} is larger than ${STATEMENT_BYTES_MAX / (1024 * 1024)} MB; split the statement by date`);
    const csv = await readFile(path);
    const columns = str(values.columns) ?? '';
    const result = await io.withDb(async (db) => {
      const { checkoutUrlHost } = await io.deployment(db);
      const forceReason = str(values['force-reason']) ?? null;
      return importStatement(db, {
        bankCode: bank,
        fileName: basename(file),
        csv,
        columns,
        importedBy: io.actor,
        checkoutUrlHost,
        collectionAccounts: collectionAccounts(io.config().providers.bankTransfer),
        forceReason,
      });
    });
    if (values.json) {
      io.out(JSON.stringify(result));
      return;
    }
    const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
    io.out(
      `imported ${result.file_name} (${result.bank_code}): ${count(result.lines, 'line')}, ${count(result.credits, 'credit')}${result.debits ? `, ${count(result.debits, 'debit')} left out` : ''}`,
    );
    io.out(`  matched           ${result.matched}`);
    io.out(
      `  amount mismatch   ${result.amount_mismatch}${result.amount_mismatch ? '  (held for a decision under Review in the console)' : ''}`,
    );
    io.out(
      `  unmatched         ${result.unmatched}${result.unmatched ? '  (in the unmatched queue at /ops/statements)' : ''}`,
    );
    io.out(`  duplicates        ${result.duplicates}${result.duplicates ? '  (imported before: nothing done)' : ''}`);
    io.out(`  errors            ${result.errors}`);
    for (const problem of result.problems) io.out(`line ${problem.line}: ${problem.message}`);
  },
};
