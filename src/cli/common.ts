// What every sika command shares: the error that prints the usage, and who the audit log says acted.

/** A command used wrongly: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {}

/** The actor of changes made from the command line (the audit log's "who"). */
export const CLI_ACTOR = { type: 'system' as const, id: 'cli', email: null };
