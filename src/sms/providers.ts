// The SMS provider interface and the one HTTP call the adapters make. A send ends in one of three ways, and
// the worker (delivery.ts) treats each differently:
// - sent: the provider took the message and gave its id;
// - SmsRefusedError: the provider answered and refused this message (bad number, unknown sender id, no credit,
//   bad credentials); sending it again would be refused again, so the SMS is failed without a retry;
// - SmsNotSentError: the provider certainly did not take it (the connection was refused, or it answered
//   5xx/429 "try later"); retried on the schedule;
// - SmsAnswerLostError: the request went out but its answer did not come back (timeout, reset). Neither Hubtel
//   nor mNotify documents an idempotency key for a send or a status query by our reference, so we cannot tell
//   whether it went out; the SMS is failed ("answer lost, may have been sent") rather than risk a payer
//   receiving it twice.
// This is src/rails/provider-http.ts's split, written again here because src/sms may import only src/lib and
// src/db (ARCHITECTURE.md); its error classes belong to the rails.
import { SMS_SEND_TIMEOUT_MS } from './model.ts';
import { causeCode, neverSentCode } from '../lib/connection-failures.ts';

export interface SmsProvider {
  /** 'hubtel', 'mnotify': written on the SMS with its message id. */
  readonly id: string;
  /** Sends one SMS to `to` ('233' and 9 digits); `reference` is our id (sms_…), sent where the provider keeps one. */
  send(to: string, body: string, reference: string): Promise<{ messageId: string | null }>;
}

/** The provider answered and refused this message: failed, no retry. */
export class SmsRefusedError extends Error {}
/** The provider certainly did not take the message: retried on the schedule. */
export class SmsNotSentError extends Error {}
/** The request was sent and its answer lost: it may have gone out, so it is never sent again. */
export class SmsAnswerLostError extends Error {}

export interface SmsHttpAnswer {
  status: number;
  /** The parsed JSON body; null when empty or not JSON. */
  json: unknown;
  text: string;
}

/** A provider's answer body is cut off past this (they answer a few hundred bytes). */
const ANSWER_CHARS_MAX = 65_536;

/**
 * One JSON POST to a provider, given up after `timeoutMs`. Throws SmsNotSentError when the request never
 * reached it, SmsAnswerLostError when it went out and no whole answer came back; any HTTP answer is returned
 * for the adapter to map (statusOutcome does the common part).
 */
export async function smsPost(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs = SMS_SEND_TIMEOUT_MS,
): Promise<SmsHttpAnswer> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
  } catch (error) {
    const code = neverSentCode(error);
    if (code) throw new SmsNotSentError(`provider unreachable (${code})`);
    throw new SmsAnswerLostError(`answer lost, may have been sent (${code ?? (error as Error).name})`);
  }
  let text: string;
  try {
    text = (await response.text()).slice(0, ANSWER_CHARS_MAX);
  } catch (error) {
    throw new SmsAnswerLostError(
      `answer lost, may have been sent (cut off: ${causeCode(error) ?? (error as Error).name})`,
    );
  }
  let json: unknown = null;
  try {
    json = text.trim() ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: response.status, json, text };
}

/** The HTTP status's common meaning: 5xx and 429 are "not taken, try later"; other non-2xx a refusal. */
export function throwForHttpStatus(provider: string, answer: SmsHttpAnswer): void {
  if (answer.status >= 200 && answer.status < 300) return;
  const said = answer.text.replace(/\s+/g, ' ').slice(0, 200);
  if (answer.status >= 500 || answer.status === 429)
    throw new SmsNotSentError(`${provider} answered HTTP ${answer.status}: ${said}`);
  throw new SmsRefusedError(`${provider} refused the message: HTTP ${answer.status}: ${said}`);
}

/** A field of an unknown JSON value, leniently: undefined when absent or not an object. */
export function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (!current || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

export const asText = (value: unknown): string | null =>
  typeof value === 'string' && value ? value : typeof value === 'number' ? String(value) : null;
