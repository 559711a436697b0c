// mNotify's SMS API (version 2), from its public documentation, https://readthedocs.mnotify.com ("Quick Bulk
// SMS"), read through the Node connector that points to it (https://github.com/commisol/mnotify-node, index.js
// for the endpoint and lib/responses.js for the codes) and mNotify's older page for the sender id rule
// (http://developer.mnotify.com/SMS_API/Send_Multiple_SMS: 11 characters at most, numbers as 233244XXXXXX):
// - endpoint and authentication: POST {base}/sms/quick?key=API_KEY, base https://api.mnotify.com/api; the key
//   rides in the query string, there is no header scheme;
// - request: JSON {recipient: [numbers], sender (≤ 11 characters, registered), message, is_schedule: false,
//   schedule_date: ''};
// - answer: {status: 'success', code: '2000', message, summary: {_id, message_id, total_sent, total_rejected,
//   numbers_sent, credit_used, credit_left}}; code 2000 sent, 2001 scheduled; 4000-4015 refusals (numeric or
//   unregistered sender id 4000/4014, empty fields 4001, sender too long 4003, not enough credit 4004);
//   HTTP 401/403 a bad key; 429, 500, 503 "try later".
// The send takes no reference of ours and no idempotency key, and delivery reports are looked up by
// mNotify's campaign id only: after a lost answer there is nothing to ask (delivery.ts fails it).
import { asText, field, type SmsProvider, SmsRefusedError, smsPost, throwForHttpStatus } from './providers.ts';

export interface MnotifySmsSettings {
  /** MNOTIFY_API_KEY. */
  apiKey: string;
  /** MNOTIFY_SENDER: the registered sender id (at most 11 characters). */
  sender: string;
  /** MNOTIFY_URL: the API's base, https://api.mnotify.com/api by default. */
  url: string;
}

export function mnotifySmsProvider(settings: MnotifySmsSettings, timeoutMs?: number): SmsProvider {
  return {
    id: 'mnotify',
    async send(to, body) {
      const url = `${settings.url.replace(/\/+$/, '')}/sms/quick?key=${encodeURIComponent(settings.apiKey)}`;
      const answer = await smsPost(
        url,
        {},
        { recipient: [to], sender: settings.sender, message: body, is_schedule: false, schedule_date: '' },
        timeoutMs,
      );
      throwForHttpStatus('mNotify', answer);
      const code = asText(field(answer.json, 'code'));
      if (field(answer.json, 'status') !== 'success' || code !== '2000')
        throw new SmsRefusedError(
          `mNotify refused the message: ${code ?? 'no code'} ${asText(field(answer.json, 'message')) ?? ''}`.trim(),
        );
      // The campaign's id is what mNotify's delivery report takes (GET /campaign/{id}).
      const summary = field(answer.json, 'summary');
      return { messageId: asText(field(summary, '_id')) ?? asText(field(summary, 'message_id')) };
    },
  };
}
