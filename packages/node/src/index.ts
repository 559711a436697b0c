// @sika/node: a client for the Sika API (typed from its OpenAPI document) and webhook verification.
export {
  Sika,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type SikaOptions,
  type RequestOptions,
  type RequestBody,
  type Query,
  type GetResponse,
  type ResponseBody,
  type components,
  type operations,
  type paths,
} from './client.js';
export { SikaError, type ErrorEnvelope } from './errors.js';
export { paginate, type CursorPage } from './paging.js';
export { RETRY_AFTER_MAX_MS, retryAfterMs } from './retry.js';
export { VERSION } from './version.js';
export {
  webhooks,
  WebhookVerificationError,
  type SikaEvent,
  type WebhookEvent,
  type WebhookHeaders,
} from './webhooks.js';
