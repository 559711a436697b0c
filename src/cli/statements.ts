// sika statements import: a bank statement CSV of the collection account, matched to Live bank transfers
// (docs/bank-statements.md).
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openDb } from '../db/index.ts';
import { STATEMENT_BYTES_MAX } from '../statements/model.ts';
import { importStatement } from '../statements/service.ts';
import { CLI_ACTOR, UsageError } from './common.ts';

const STATEMENTS_USAGE = `usage: sika statements import FILE --bank CODE [--columns MAPPING] [--json]

Imports a bank statement of the bank transfer collection account, exported from the bank as CSV, and
matches each credit to the Live bank transfer whose payment reference (SK and 8 characters) is in its
narration or reference: the exact amount pays it, another amount holds it for review, and a credit that
matches no payment waits in the console's unmatched queue (/ops/statements). Debits are left out. A row
that cannot be read is reported with its line number; the others are imported. Importing the same
statement again changes nothing (each line has a fingerprint).

options:
  --bank CODE        the bank the statement is from, by its code in the console's Banks (e.g. GCB)
  --columns MAPPING  which column is which, when the headers are not recognised, by header name or
                     position from 1: date=Txn Date,credit=Amount In,description=Details
                     (fields: date, description, credit, debit, amount, type, balance, reference)
  --json             the result as JSON

The CSV format, the headers recognised and the matching rules: docs/bank-statements.md.`;

export async function statementsCommand(sub: string | undefined, args: string[]): Promise<void> {
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    console.log(STATEMENTS_USAGE);
    return;
  }
  if (sub !== 'import') throw new UsageError(`unknown command: statements ${sub}`);
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { bank: { type: 'string' }, columns: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) {
    console.log(STATEMENTS_USAGE);
    return;
  }
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) throw new UsageError('statements import takes one statement FILE');
  if (!values.bank) throw new UsageError('statements import needs --bank CODE (the bank the statement is from, e.g. GCB)');
  // Read before opening storage: the embedded data dir is held for as long as it is open.
  const size = await stat(file).then((s) => s.size, (error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file} (${error.code ?? error.message})`);
  });
  if (size > STATEMENT_BYTES_MAX) throw new Error(`${file} is larger than ${STATEMENT_BYTES_MAX / (1024 * 1024)} MB; split the statement by date`);
  const csv = await readFile(file);
  const config = loadConfig();
  const db = await openDb(config);
  try {
    const result = await importStatement(db, { bankCode: values.bank, fileName: basename(file), csv, columns: values.columns ?? '', importedBy: CLI_ACTOR, checkoutUrlHost: config.checkoutUrlHost });
    if (values.json) {
      console.log(JSON.stringify(result));
      return;
    }
    const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
    console.log(`imported ${result.file_name} (${result.bank_code}): ${count(result.lines, 'line')}, ${count(result.credits, 'credit')}${result.debits ? `, ${count(result.debits, 'debit')} left out` : ''}`);
    console.log(`  matched           ${result.matched}`);
    console.log(`  amount mismatch   ${result.amount_mismatch}${result.amount_mismatch ? '  (held for a decision under Review in the console)' : ''}`);
    console.log(`  unmatched         ${result.unmatched}${result.unmatched ? '  (in the unmatched queue at /ops/statements)' : ''}`);
    console.log(`  duplicates        ${result.duplicates}${result.duplicates ? '  (imported before: nothing done)' : ''}`);
    console.log(`  errors            ${result.errors}`);
    for (const problem of result.problems) console.log(`line ${problem.line}: ${problem.message}`);
  } finally {
    await db.close();
  }
}

