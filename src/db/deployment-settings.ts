// The settings of the server last started on this storage (migration 027): written at every server start
// (src/main.ts), read by the `sika` CLI (src/cli/deployment.ts) so that its links and its webhook target rule
// are the deployment's, not a guess from the CLI's own environment.
import type { Queryable } from './types.ts';

export interface DeploymentSettings {
  /** The public BASE_URL (links into the dashboard and the consoles). */
  baseUrl: string;
  /** CHECKOUT_URL_HOST (payer-facing URLs), BASE_URL when not set. */
  checkoutUrlHost: string;
  /** The resolved WEBHOOK_ALLOW_PRIVATE_TARGETS rule. */
  webhookAllowPrivateTargets: boolean;
}

export async function recordDeploymentSettings(db: Queryable, settings: DeploymentSettings): Promise<void> {
  await db.query(
    `INSERT INTO deployment_settings (singleton, base_url, checkout_url_host, webhook_allow_private_targets) VALUES (true, $1, $2, $3)
     ON CONFLICT (singleton) DO UPDATE SET base_url = EXCLUDED.base_url, checkout_url_host = EXCLUDED.checkout_url_host,
       webhook_allow_private_targets = EXCLUDED.webhook_allow_private_targets, recorded_at = now()`,
    [settings.baseUrl, settings.checkoutUrlHost, settings.webhookAllowPrivateTargets],
  );
}

/** What the last server started with, and when; null when no server has started on this storage. */
export async function readDeploymentSettings(
  db: Queryable,
): Promise<(DeploymentSettings & { recordedAt: Date }) | null> {
  const rows = await db.query<{
    base_url: string;
    checkout_url_host: string;
    webhook_allow_private_targets: boolean;
    recorded_at: Date;
  }>('SELECT base_url, checkout_url_host, webhook_allow_private_targets, recorded_at FROM deployment_settings');
  const row = rows[0];
  return row
    ? {
        baseUrl: row.base_url,
        checkoutUrlHost: row.checkout_url_host,
        webhookAllowPrivateTargets: row.webhook_allow_private_targets,
        recordedAt: row.recorded_at,
      }
    : null;
}
