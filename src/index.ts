// What the package exports for merchants' own servers.
export { verifyWebhook, WebhookVerificationError, type WebhookErrorCode } from './events/signing.ts';
