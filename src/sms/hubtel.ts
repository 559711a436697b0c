// Hubtel's SMS API, from its public documentation:
// - https://businessdocs-developers.hubtel.com/docs/getting-started-with-sms (authentication: HTTP Basic with
//   the SMS API client id as user and client secret as password on every POST);
// - https://businessdocs-developers.hubtel.com/docs/simple-messaging ("Simple SEND SMS POST":
//   POST https://sms.hubtel.com/v1/messages/send, JSON {From, To, Content}; the answer
//   {rate, messageId, status, networkId, clientReference, statusDescription}, status 0 = submitted);
// - https://hubtel.readme.io/reference/response-code (HTTP 200/201 taken; 400 invalid request or number,
//   401 authorization failed, 402 no credit, 403 recipient did not opt in: refusals; 500 and 502: the
//   request failed on Hubtel's side).
// The documented send takes no reference of ours and no idempotency key (clientReference comes back null for
// a simple message), and the status check (docs/sms-status-check) looks up Hubtel's messageId only: after a
// lost answer there is nothing to ask, so delivery.ts fails it rather than send twice.
import { asText, field, type SmsProvider, SmsRefusedError, smsPost, throwForHttpStatus } from './providers.ts';

export interface HubtelSmsSettings {
  clientId: string;
  clientSecret: string;
  /** HUBTEL_SMS_SENDER: the sender id payers see (at most 11 characters, registered with Hubtel). */
  sender: string;
  /** HUBTEL_SMS_URL: the API's base, https://sms.hubtel.com/v1 by default. */
  url: string;
}

export function hubtelSmsProvider(settings: HubtelSmsSettings, timeoutMs?: number): SmsProvider {
  const authorization = `Basic ${Buffer.from(`${settings.clientId}:${settings.clientSecret}`).toString('base64')}`;
  return {
    id: 'hubtel',
    async send(to, body) {
      const answer = await smsPost(
        `${settings.url.replace(/\/+$/, '')}/messages/send`,
        { authorization },
        { From: settings.sender, To: to, Content: body },
        timeoutMs,
      );
      throwForHttpStatus('Hubtel', answer);
      // A 2xx whose status is not 0 is a request Hubtel did not submit (simple-messaging: "status: Status code
      // of the request"), said in statusDescription.
      const status = field(answer.json, 'status');
      if (status !== undefined && status !== 0 && status !== '0')
        throw new SmsRefusedError(
          `Hubtel refused the message: status ${String(status)} ${asText(field(answer.json, 'statusDescription')) ?? ''}`.trim(),
        );
      return { messageId: asText(field(answer.json, 'messageId')) };
    },
  };
}
