import type { Environment } from '../lib/environment.ts';

export type Role = 'owner' | 'admin' | 'developer' | 'approver' | 'viewer';

export const API_KEY_SECRET_LENGTH = 40;
export const API_KEY_PREFIX_LENGTH = 16; // "ak_test_" + 8 characters, shown in the dashboard
export const API_KEY_PATTERN = /^ak_(test|live)_[A-Za-z0-9]{40}$/;

export const livemode = (environment: Environment): boolean => environment === 'live';

// The webhook endpoint's table is in src/lib/statuses.ts: the events' delivery reads it too, and src/events may
// not import this folder (src/accounts announces account.updated through src/events).
export { WEBHOOK_ENDPOINT_STATUSES, type WebhookEndpointStatus, webhookEndpointMachine } from '../lib/statuses.ts';
