import { activationMachine, type ActivationStatus } from './activation-model.ts';
import type { Queryable } from '../db/index.ts';
import { firstRow, firstValue } from '../db/first-row.ts';
import { sqlList } from '../lib/state-machine.ts';
import { webhookEndpointMachine, type Role, type WebhookEndpointStatus } from './model.ts';
import type { Environment } from '../lib/environment.ts';

export interface ApiKeyRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  prefix: string;
  key_hash: Uint8Array;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export const insertMerchant = (
  tx: Queryable,
  m: {
    id: string;
    name: string;
    email: string;
    payoutApprovalRequired: boolean;
    activationStatus: ActivationStatus;
  },
) =>
  tx.query(
    `INSERT INTO merchants (id, name, email, payout_approval_required, activation_status, activated_at)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $5 = 'approved' THEN now() END)`,
    [m.id, m.name, m.email, m.payoutApprovalRequired, activationMachine.initialStatus(m.activationStatus)],
  );

export const insertUser = (
  tx: Queryable,
  u: { id: string; merchantId: string; email: string; passwordHash: string | null; role: Role },
) =>
  tx.query('INSERT INTO users (id, merchant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5)', [
    u.id,
    u.merchantId,
    u.email,
    u.passwordHash,
    u.role,
  ]);

export const insertIntegration = (
  tx: Queryable,
  i: { id: string; merchantId: string; environment: Environment; name: string },
) =>
  tx.query('INSERT INTO integrations (id, merchant_id, environment, name) VALUES ($1, $2, $3, $4)', [
    i.id,
    i.merchantId,
    i.environment,
    i.name,
  ]);

export const insertApiKey = (
  tx: Queryable,
  k: {
    id: string;
    merchantId: string;
    integrationId: string;
    environment: Environment;
    prefix: string;
    keyHash: Buffer;
    createdByUserId: string | null;
  },
) =>
  tx.query(
    'INSERT INTO api_keys (id, merchant_id, integration_id, environment, prefix, key_hash, created_by_user_id) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [k.id, k.merchantId, k.integrationId, k.environment, k.prefix, k.keyHash, k.createdByUserId],
  );

const ENDPOINT_INITIAL = webhookEndpointMachine.initialStatus('active');

export const insertWebhookEndpoint = (
  tx: Queryable,
  w: { id: string; merchantId: string; environment: Environment; apiKeyId: string; url: string; secret: string },
) =>
  tx.query(
    `INSERT INTO webhook_endpoints (id, merchant_id, environment, api_key_id, url, secret, status) VALUES ($1, $2, $3, $4, $5, $6, '${ENDPOINT_INITIAL}')`,
    [w.id, w.merchantId, w.environment, w.apiKeyId, w.url, w.secret],
  );

export const findApiKeyByPrefix = (db: Queryable, prefix: string) =>
  firstRow(
    db.read<ApiKeyRow>(
      'api_key_by_prefix',
      'SELECT id, merchant_id, environment, prefix, key_hash, revoked_at, last_used_at FROM api_keys WHERE prefix = $1',
      [prefix],
    ),
  );

/** Writes last_used_at at most once a minute per key, so authentication stays a read. */
export const touchApiKey = (db: Queryable, id: string) =>
  db.query(
    "UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')",
    [id],
  );

/** Revokes a key of this merchant and environment; another merchant's or environment's key is not found (no row). */
export const revokeApiKey = (db: Queryable, id: string, merchantId: string, environment: Environment) =>
  db.query<{ id: string; prefix: string }>(
    'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND merchant_id = $2 AND environment = $3 AND revoked_at IS NULL RETURNING id, prefix',
    [id, merchantId, environment],
  );

/** A merchant's key named by its id or its visible prefix (either environment), revoked or not. */
export const findMerchantApiKey = (db: Queryable, merchantId: string, idOrPrefix: string) =>
  firstRow(
    db.query<{ id: string; prefix: string; environment: Environment; revoked_at: Date | null }>(
      'SELECT id, prefix, environment, revoked_at FROM api_keys WHERE merchant_id = $1 AND (id::text = $2 OR prefix = $2)',
      [merchantId, idOrPrefix],
    ),
  );

/** The merchant's owner (the requester of payouts made with keys created outside the dashboard). */
export const findOwnerUserId = (db: Queryable, merchantId: string) =>
  firstValue(
    db.query<{ id: string }>(
      "SELECT id FROM users WHERE merchant_id = $1 AND role = 'owner' AND active ORDER BY created_at LIMIT 1",
      [merchantId],
    ),
    'id',
  );

export const findMerchant = (db: Queryable, id: string) =>
  firstRow(
    db.query<{
      id: string;
      name: string;
      email: string;
      payout_approval_required: boolean;
      created_at: Date;
    }>('SELECT id, name, email, payout_approval_required, created_at FROM merchants WHERE id = $1', [id]),
  );

export async function userEmailExists(db: Queryable, email: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email]);
  return rows.length > 0;
}

export const listApiKeys = (db: Queryable, merchantId: string, environment: Environment) =>
  db.query<{
    id: string;
    prefix: string;
    integration_id: string;
    integration_name: string;
    created_at: Date;
    revoked_at: Date | null;
    last_used_at: Date | null;
    created_by_email: string | null;
  }>(
    `SELECT k.id, k.prefix, k.integration_id, i.name AS integration_name, k.created_at, k.revoked_at, k.last_used_at, u.email AS created_by_email
       FROM api_keys k JOIN integrations i ON i.id = k.integration_id LEFT JOIN users u ON u.id = k.created_by_user_id
      WHERE k.merchant_id = $1 AND k.environment = $2 ORDER BY k.created_at DESC`,
    [merchantId, environment],
  );

export const listIntegrations = (db: Queryable, merchantId: string, environment: Environment) =>
  db.query<{ id: string; name: string; created_at: Date }>(
    'SELECT id, name, created_at FROM integrations WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at',
    [merchantId, environment],
  );

export const listEndpoints = (db: Queryable, merchantId: string, environment: Environment) =>
  db.query<{
    id: string;
    url: string;
    status: string;
    api_key_id: string;
    key_prefix: string;
    disabled_reason: string | null;
    previous_secret_expires_at: Date | null;
    created_at: Date;
  }>(
    `SELECT w.id, w.url, w.status, w.api_key_id, k.prefix AS key_prefix, w.disabled_reason, w.previous_secret_expires_at, w.created_at
       FROM webhook_endpoints w JOIN api_keys k ON k.id = w.api_key_id WHERE w.merchant_id = $1 AND w.environment = $2 ORDER BY w.created_at`,
    [merchantId, environment],
  );

export const findEndpoint = (db: Queryable, merchantId: string, environment: Environment, id: string) =>
  firstRow(
    db.query<{
      id: string;
      url: string;
      status: string;
      api_key_id: string;
      environment: Environment;
    }>(
      'SELECT id, url, status, api_key_id, environment FROM webhook_endpoints WHERE id = $1 AND merchant_id = $2 AND environment = $3',
      [id, merchantId, environment],
    ),
  );

export const setEndpointStatus = (db: Queryable, id: string, status: WebhookEndpointStatus, reason: string | null) =>
  // Enabled again: it starts with a clean record (failing_since: see events/store.noteEndpointFailure).
  db.query(
    `UPDATE webhook_endpoints SET status = $2, disabled_reason = $3, failing_since = CASE WHEN $2 = 'active' THEN NULL ELSE failing_since END, updated_at = now()
      WHERE id = $1 AND status IN (${sqlList(webhookEndpointMachine.fromStatusesTo(status))})`,
    [id, status, reason],
  );

/** A new secret; the old one keeps signing until the overlap ends. Any merchant's endpoint when merchantId is null. */
export const rotateEndpointSecret = (
  tx: Queryable,
  r: { endpointId: string; overlapS: number; secret: string; merchantId: string | null },
) =>
  tx.query<{ id: string; previous_secret_expires_at: Date }>(
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = now() + make_interval(secs => $2),
            secret = $3, updated_at = now()
      WHERE id = $1 AND ($4::uuid IS NULL OR merchant_id = $4) RETURNING id, previous_secret_expires_at`,
    [r.endpointId, r.overlapS, r.secret, r.merchantId],
  );

/** Every webhook endpoint paired with the key (enabled or not), with its signing secrets, oldest first. */
export const listKeyEndpointSecrets = (db: Queryable, apiKeyId: string) =>
  db.query<{
    id: string;
    url: string;
    status: string;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: Date | null;
  }>(
    `SELECT id, url, status, secret, previous_secret, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at
       FROM webhook_endpoints WHERE api_key_id = $1 ORDER BY created_at, id`,
    [apiKeyId],
  );

/** The merchant's endpoints in both environments. */
export const listMerchantEndpoints = (db: Queryable, merchantId: string) =>
  db.query<{
    id: string;
    environment: string;
    api_key_id: string;
    url: string;
    status: string;
    disabled_reason: string | null;
    created_at: Date;
  }>(
    'SELECT id, environment, api_key_id, url, status, disabled_reason, created_at FROM webhook_endpoints WHERE merchant_id = $1 ORDER BY created_at',
    [merchantId],
  );

/** The merchant check of the CLI's payouts command: an id that is not a uuid is simply not found. */
export async function merchantIdExists(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM merchants WHERE id::text = $1', [id]);
  return rows.length > 0;
}

/** The merchant's account-wide rules (the dashboard's Settings page). */
export const findMerchantRules = (db: Queryable, merchantId: string) =>
  firstRow(
    db.query<{ payout_approval_required: boolean; second_factor_required: boolean }>(
      'SELECT payout_approval_required, second_factor_required FROM merchants WHERE id = $1',
      [merchantId],
    ),
  );

/** The merchant's users, the first created first. */
export const listUsers = (db: Queryable, merchantId: string) =>
  db.query<{ id: string; email: string; role: string; active: boolean; created_at: Date; second_factor: boolean }>(
    'SELECT id, email, role, active, created_at, totp_enabled_at IS NOT NULL AS second_factor FROM users WHERE merchant_id = $1 ORDER BY created_at',
    [merchantId],
  );

/** A user the owner invited: a temporary password that must be changed at the first sign-in. */
export const insertInvitedUser = (
  tx: Queryable,
  u: { id: string; merchantId: string; email: string; passwordHash: string; role: string; invitedByUserId: string },
) =>
  tx.query(
    'INSERT INTO users (id, merchant_id, email, password_hash, role, invited_by_user_id, must_change_password) VALUES ($1, $2, $3, $4, $5, $6, true)',
    [u.id, u.merchantId, u.email, u.passwordHash, u.role, u.invitedByUserId],
  );

export const lockPayoutApprovalRequired = (tx: Queryable, merchantId: string) =>
  firstRow(
    tx.query<{ payout_approval_required: boolean }>(
      'SELECT payout_approval_required FROM merchants WHERE id = $1 FOR UPDATE',
      [merchantId],
    ),
  );

export const updatePayoutApprovalRequired = (tx: Queryable, merchantId: string, required: boolean) =>
  tx.query('UPDATE merchants SET payout_approval_required = $2 WHERE id = $1', [merchantId, required]);

export const findPayoutApprovalRequired = (db: Queryable, merchantId: string) =>
  firstRow(
    db.query<{ payout_approval_required: boolean }>('SELECT payout_approval_required FROM merchants WHERE id = $1', [
      merchantId,
    ]),
  );

/** An active user (deactivated users decide nothing). */
export const findActiveUser = (db: Queryable, id: string) =>
  firstRow(
    db.query<{ merchant_id: string; role: string; email: string }>(
      'SELECT merchant_id, role, email FROM users WHERE id = $1 AND active',
      [id],
    ),
  );
