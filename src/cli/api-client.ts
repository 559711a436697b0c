// What `sika listen` and `sika trigger` share: they are HTTP clients of a running Sika server with a
// Test API key (never storage), so a merchant can run them from a laptop against any Sika they can reach.
import { randomUUID } from 'node:crypto';
import { UsageError } from './common.ts';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
/** How long one API call may take before the command gives up on it. */
export const API_CALL_TIMEOUT_MS = 30_000;

const TEST_KEY_PREFIX = 'ak_test_';
const LIVE_KEY_PREFIX = 'ak_live_';

/** The server and the Test key a command talks to. */
export interface ApiTarget {
  apiKey: string;
  baseUrl: string;
}

/** The options every API command takes, and their help text. */
export const API_OPTIONS = {
  'api-key': { type: 'string' },
  'base-url': { type: 'string' },
} as const;

export const API_OPTIONS_HELP = `  --api-key KEY      a Test API key (ak_test_…); default: $SIKA_API_KEY. Live keys are refused
  --base-url URL     the Sika server; default: $SIKA_BASE_URL, else ${DEFAULT_BASE_URL}`;

/** The key and server from the options or the environment; a Live or malformed key is a usage error. */
export function apiTarget(
  command: string,
  values: { 'api-key'?: string; 'base-url'?: string },
  env: NodeJS.ProcessEnv = process.env,
): ApiTarget {
  if (values['api-key'] === undefined) renamedVariable(env, 'SIKA_KEY', 'SIKA_API_KEY');
  if (values['base-url'] === undefined) renamedVariable(env, 'SIKA_URL', 'SIKA_BASE_URL');
  const apiKey = (values['api-key'] ?? env.SIKA_API_KEY ?? '').trim();
  if (!apiKey) throw new UsageError(`${command} needs a Test API key: --api-key ak_test_… or SIKA_API_KEY`);
  if (apiKey.startsWith(LIVE_KEY_PREFIX)) {
    throw new UsageError(
      `${command} works with Test keys only, and this is a Live key (${LIVE_KEY_PREFIX}…): nothing was sent. Use your ${TEST_KEY_PREFIX}… key`,
    );
  }
  if (!apiKey.startsWith(TEST_KEY_PREFIX))
    throw new UsageError(`${command}: the API key must be a Sika Test key (${TEST_KEY_PREFIX}…)`);
  const raw = (values['base-url'] ?? env.SIKA_BASE_URL ?? DEFAULT_BASE_URL).trim();
  return { apiKey, baseUrl: httpUrl('--base-url', raw).replace(/\/+$/, '') };
}

/**
 * Earlier READMEs said SIKA_KEY and SIKA_URL; they are not read (one name each), but one set without its
 * new name is surely meant: say which name to use rather than fall back to a default server or no key.
 */
function renamedVariable(env: NodeJS.ProcessEnv, old: string, current: string): void {
  if (env[old]?.trim() && !env[current]?.trim())
    throw new UsageError(`${old} is set, but Sika reads ${current}: export ${current}="$${old}" (and unset ${old})`);
}

/** An http(s) URL, or a usage error naming the option. */
export function httpUrl(option: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${option} must be a URL, e.g. http://localhost:3000/hooks (got ${value})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${option} must be an http or https URL (got ${value})`);
  return url.toString();
}

/** The server answered with an error (its SPEC 7 envelope), or could not be reached. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The error's cause in a few words: connection refused, timeout, or the fetch error's own message. */
export function networkProblem(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timed out';
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ECONNRESET' || cause?.code === 'UND_ERR_SOCKET') return 'connection reset';
  if (cause?.code === 'ENOTFOUND' || cause?.code === 'EAI_AGAIN') return 'host not found';
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

type JsonBody = Record<string, unknown>;

/** One API call with the key; the parsed JSON answer of a 2xx, else ApiError with the server's detail. */
export async function apiCall<T = JsonBody>(
  target: ApiTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: JsonBody,
  signal?: AbortSignal,
): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${target.apiKey}`, accept: 'application/json' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = `cli-${randomUUID()}`;
  }
  let res: Response;
  try {
    res = await fetch(`${target.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal
        ? AbortSignal.any([AbortSignal.timeout(API_CALL_TIMEOUT_MS), signal])
        : AbortSignal.timeout(API_CALL_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiError(`${method} ${target.baseUrl}${path}: ${networkProblem(error)}`, null, null);
  }
  const text = await res.text();
  if (!res.ok) throw apiErrorOf(method, path, res.status, text);
  return (text ? JSON.parse(text) : {}) as T;
}

/** The ApiError of a refused call, with the server's code and detail when its body is the error envelope. */
export function apiErrorOf(method: string, path: string, status: number, text: string): ApiError {
  let code: string | null = null;
  let detail = text.slice(0, 300);
  try {
    const envelope = JSON.parse(text) as {
      error?: { code?: string; message?: string; detail?: string };
      code?: string;
      message?: string;
      detail?: string;
    };
    const error = envelope.error ?? envelope;
    code = error.code ?? null;
    detail = [...new Set([error.message, error.detail].filter(Boolean))].join(' ') || detail;
  } catch {
    // not JSON: the text itself
  }
  return new ApiError(`${method} ${path} answered ${status}${code ? ` ${code}` : ''}: ${detail}`, status, code);
}
