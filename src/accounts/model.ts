import { defineStateMachine } from '../lib/state-machine.ts';

import type { Environment } from '../lib/environment.ts';

export type Role = 'owner' | 'admin' | 'developer' | 'approver' | 'viewer';

export const API_KEY_SECRET_LENGTH = 40;
export const API_KEY_PREFIX_LENGTH = 16; // "ak_test_" + 8 characters, shown in the dashboard
export const API_KEY_PATTERN = /^ak_(test|live)_[A-Za-z0-9]{40}$/;

export const livemode = (environment: Environment): boolean => environment === 'live';

export const WEBHOOK_ENDPOINT_STATUSES = ['active', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/**
 * A webhook endpoint is created active; the merchant disables and enables it, a 410 Gone or five days of
 * failures disable it. Each status may be written over itself: disabling twice (two tabs, a 410 racing the
 * merchant) records the newer reason, enabling an active endpoint clears its failure record.
 */
export const webhookEndpointMachine = defineStateMachine({
  name: 'webhook endpoint',
  statuses: WEBHOOK_ENDPOINT_STATUSES,
  initial: ['active'],
  transitions: { active: ['disabled', 'active'], disabled: ['active', 'disabled'] },
});
