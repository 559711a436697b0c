// The event types Sika emits, from the one list the API document also uses (src/events/event-schemas.ts,
// read from the status tables that cause them). `sika listen --events` checks names against it, and
// `sika trigger` says for each whether and how a Test key can make it.
import { EVENT_TYPES } from '../events/event-schemas.ts';

export const WEBHOOK_EVENT_TYPES: readonly string[] = EVENT_TYPES;

export const isWebhookEventType = (name: string): boolean => WEBHOOK_EVENT_TYPES.includes(name);
