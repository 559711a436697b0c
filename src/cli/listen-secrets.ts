// What `sika listen` signs forwarded events with. By default the secrets of the Test webhook endpoints paired
// with its key (GET /api/v1/events/stream/signing-secrets, Test keys only), so a receiver set up with the
// endpoint's secret (the first-run banner's, `sika merchant create`'s, the dashboard's) verifies what listen
// forwards exactly as it verifies Sika's own deliveries; --secret or SIKA_WEBHOOK_SECRET overrides them; a key
// with no endpoint gets a new secret for the run. Secrets are asked for again every LISTEN_SECRETS_REFRESH_MS,
// so a rotation is followed: during its overlap both secrets sign, as the server's deliveries do.
import { setTimeout as sleep } from 'node:timers/promises';
import { apiCall, ApiError, type ApiTarget } from './api-client.ts';

export const SIGNING_SECRETS_PATH = '/api/v1/events/stream/signing-secrets';
/** How old the secrets may be before a delivery asks for them again (a rotation is followed within this). */
export const LISTEN_SECRETS_REFRESH_MS = 10_000;
/** Waits between tries to reach the server for the secrets at start, doubling. */
const SECRETS_RETRY_DELAY_MIN_MS = 500;
const SECRETS_RETRY_DELAY_MAX_MS = 10_000;

/** One secret of the server's answer (the StreamSigningSecret schema, src/http/routes/events/routes.ts). */
export interface EndpointSecret {
  endpoint_id: string;
  url: string;
  status: string;
  secret: string;
  /** null: the endpoint's current secret; else a previous one that signs until then. */
  expires_at: string | null;
}

/** The secrets to sign the next delivery with (several: each gives a signature, as during a rotation). */
export interface SigningSecrets {
  current(): Promise<string[]>;
}

export const fixedSecrets = (secret: string): SigningSecrets => ({ current: async () => [secret] });

/** The key's endpoint secrets, asked for once; an ApiError when the server refuses (Live key, unknown key). */
export async function fetchEndpointSecrets(target: ApiTarget, signal?: AbortSignal): Promise<EndpointSecret[]> {
  const answer = await apiCall<{ secrets: EndpointSecret[] }>(target, 'GET', SIGNING_SECRETS_PATH, undefined, signal);
  return answer.secrets;
}

/**
 * fetchEndpointSecrets until the server answers: while it cannot be reached (not started yet, restarting) the
 * command waits, saying so, rather than fall back to a secret no receiver knows. A refusal is final.
 */
export async function fetchEndpointSecretsPatiently(
  target: ApiTarget,
  signal: AbortSignal,
  err: (line: string) => void,
): Promise<EndpointSecret[] | null> {
  let delayMs = SECRETS_RETRY_DELAY_MIN_MS;
  for (;;) {
    try {
      return await fetchEndpointSecrets(target, signal);
    } catch (error) {
      if (signal.aborted) return null;
      if (!(error instanceof ApiError) || error.status !== null) throw error;
      err(`Cannot get the signing secret (${error.message}); trying again in ${delayMs / 1000} s`);
      await sleep(delayMs, undefined, { signal }).catch(() => {});
      if (signal.aborted) return null;
      delayMs = Math.min(delayMs * 2, SECRETS_RETRY_DELAY_MAX_MS);
    }
  }
}

/** The secrets still signing at `nowMs`: every current one, and previous ones until they expire. */
export const signingNow = (secrets: readonly EndpointSecret[], nowMs = Date.now()): string[] =>
  secrets.filter((s) => s.expires_at === null || Date.parse(s.expires_at) > nowMs).map((s) => s.secret);

/** The key's endpoint secrets, asked for again when older than LISTEN_SECRETS_REFRESH_MS; a failed refresh keeps the last ones. */
export class EndpointSecrets implements SigningSecrets {
  private fetchedAtMs = Date.now();
  private refreshFailed = false;

  constructor(
    private readonly target: ApiTarget,
    private secrets: EndpointSecret[],
    private readonly err: (line: string) => void,
    private readonly refreshMs = LISTEN_SECRETS_REFRESH_MS,
  ) {}

  async current(): Promise<string[]> {
    if (Date.now() - this.fetchedAtMs >= this.refreshMs) await this.refresh();
    const now = signingNow(this.secrets);
    // Every secret expired and no answer since: the last current ones are the best guess left.
    return now.length > 0 ? now : this.secrets.filter((s) => s.expires_at === null).map((s) => s.secret);
  }

  private async refresh(): Promise<void> {
    this.fetchedAtMs = Date.now();
    let fresh: EndpointSecret[];
    try {
      fresh = await fetchEndpointSecrets(this.target);
    } catch (error) {
      if (!this.refreshFailed)
        this.err(
          `Could not check the signing secret for a rotation (${error instanceof Error ? error.message : String(error)}); signing with the one I have`,
        );
      this.refreshFailed = true;
      return;
    }
    this.refreshFailed = false;
    if (fresh.length === 0) return; // nothing to sign with instead: keep the last ones
    const before = new Set(this.secrets.filter((s) => s.expires_at === null).map((s) => s.secret));
    for (const s of fresh)
      if (s.expires_at === null && !before.has(s.secret))
        this.err(`The signing secret of ${s.url} was rotated: now ${s.secret}`);
    this.secrets = fresh;
  }
}

/** The lines listen prints at start about the secrets it signs with. */
export function describeSecrets(secrets: readonly EndpointSecret[]): string[] {
  const lines: string[] = [];
  for (const s of secrets) {
    if (s.expires_at === null) {
      lines.push(`Your webhook signing secret: ${s.secret}`);
      lines.push(
        `  (of your Test webhook endpoint ${s.url}${s.status === 'active' ? '' : `, ${s.status}`}: a receiver verifying with it accepts what is forwarded)`,
      );
    } else {
      lines.push(`  also signing with its previous secret until ${s.expires_at} (a rotation's overlap)`);
    }
  }
  return lines;
}
