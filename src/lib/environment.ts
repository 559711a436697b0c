// Test or Live: every key, session, attempt, payout and fee schedule belongs to one (SPEC 5.1). A neutral
// module, so the rails and the domains name it without importing each other. ApiPrincipal is who calls the API,
// named by every domain's reads and writes.
export type Environment = 'test' | 'live';
export const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];

/** Who is calling: fixed by the API key (SPEC 5.1). */
export interface ApiPrincipal {
  merchantId: string;
  environment: Environment;
  apiKeyId: string;
  apiKeyPrefix: string;
}
