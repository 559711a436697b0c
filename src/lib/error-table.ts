// The error catalogue as the Markdown table of docs/errors.md: code, HTTP status, whether a retry can
// help, meaning. `npm run docs:errors` writes it; test/lib/error-catalogue.test.ts fails when it is stale.
import { ERROR_CATALOGUE, LINE_ERROR_CATALOGUE, type ErrorCode } from './errors.ts';

export function errorTableMarkdown(statusOf: Record<ErrorCode, number>): string {
  const rows = (Object.keys(ERROR_CATALOGUE) as ErrorCode[])
    .sort((a, b) => statusOf[a] - statusOf[b] || a.localeCompare(b))
    .map(
      (code) =>
        `| \`${code}\` | ${statusOf[code]} | ${ERROR_CATALOGUE[code].retryable ? 'yes' : 'no'} | ${ERROR_CATALOGUE[code].meaning} |`,
    );
  const lineRows = Object.entries(LINE_ERROR_CATALOGUE).map(([code, entry]) => `| \`${code}\` | ${entry.meaning} |`);
  return [
    '# Error codes',
    '',
    'Every error answer is `{"error": {"code", "message", "retry_after_seconds"?, "fields"?, "detail"?}}`.',
    'Match on `code`; `message` is for people and may change. "Retry" says whether sending the same',
    'request again later can succeed without changing it (wait `retry_after_seconds` / `Retry-After` when given).',
    '',
    '| code | HTTP status | retry | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    '## Codes for one line of a batch',
    '',
    '`POST /api/v1/invoice-lines` answers 207 when some lines are refused; each refused line is in `errors`',
    'as `{index, code, message}` with one of these codes.',
    '',
    '| code | meaning |',
    '|---|---|',
    ...lineRows,
    '',
    'Generated from `src/lib/errors.ts` and `src/http/errors.ts` by `npm run docs:errors`.',
    '',
  ].join('\n');
}
