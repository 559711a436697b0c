// The one HTTP client for provider APIs. It tells apart the two failures that matter for money:
// a request that certainly never reached the provider (connection refused, name not found: safe to try
// another provider) and a request that was sent but whose answer was lost (timeout, reset: the provider
// may have acted on it, so the caller asks with a status query and never sends it again under a new
// reference). Answers of any HTTP status are returned to the adapter, which maps them.
import { ProviderNoAnswerError, ProviderRefusedError } from './types.ts';
import { causeCode, neverSentCode } from '../lib/connection-failures.ts';

/** How long a provider call may take before its answer counts as lost. */
export const PROVIDER_TIMEOUT_MS_DEFAULT = 15_000;
/** A provider's answer body is cut off past this (providers answer a few KB). */
const ANSWER_BYTES_MAX = 1_048_576;

export interface ProviderRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON when an object; as-is when a string. */
  body?: unknown;
  timeoutMs?: number;
}

export interface ProviderAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or null when the body is empty or not JSON. */
  json: unknown;
  text: string;
}

export async function providerCall(request: ProviderRequest): Promise<ProviderAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    if (typeof request.body !== 'string' && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
  }
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers,
      body,
      signal: AbortSignal.timeout(request.timeoutMs ?? PROVIDER_TIMEOUT_MS_DEFAULT),
      redirect: 'manual',
    });
  } catch (error) {
    const code = neverSentCode(error);
    if (code) throw new ProviderRefusedError(`provider unreachable (${code})`);
    throw new ProviderNoAnswerError(`no answer from the provider (${code ?? (error as Error).name})`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new ProviderNoAnswerError(`the provider's answer was cut off (${causeCode(error) ?? (error as Error).name})`);
  }
  if (text.length > ANSWER_BYTES_MAX) text = text.slice(0, ANSWER_BYTES_MAX);
  let json: unknown = null;
  if (text.trim()) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  return { status: response.status, headers: response.headers, json, text };
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

export const text = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
