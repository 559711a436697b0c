// Test or Live: every key, session, attempt, payout and fee schedule belongs to one (SPEC 5.1). A neutral
// module, so the rails and the domains name it without importing each other.
export type Environment = 'test' | 'live';
export const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];
