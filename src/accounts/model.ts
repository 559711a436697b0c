import type { Environment } from '../lib/environment.ts';

export { ENVIRONMENTS, type Environment } from '../lib/environment.ts';

export type Role = 'owner' | 'admin' | 'developer' | 'approver' | 'viewer';

/** Who is calling: fixed by the API key (SPEC 5.1). */
export interface ApiPrincipal {
  merchantId: string;
  environment: Environment;
  apiKeyId: string;
  apiKeyPrefix: string;
}

export const API_KEY_SECRET_LENGTH = 40;
export const API_KEY_PREFIX_LENGTH = 16; // "ak_test_" + 8 characters, shown in the dashboard
export const API_KEY_PATTERN = /^ak_(test|live)_[A-Za-z0-9]{40}$/;

export const livemode = (environment: Environment): boolean => environment === 'live';
