// MTN MoMo's callback: sent once when a request to pay or a transfer settles, as PUT (2018 docs) or POST
// ("Allow PUT & POST on your callback listener host"), with a body "similar to the response returned by the
// status check API", and with no signature of any kind (https://momodeveloper.mtn.com/api-documentation/callback;
// https://ericssondeveloperapi.developer.azure-api.net/content/html_widgets/svamp.html). Anyone can send one, so
// it only says which transaction to ask about: the caller asks MTN with a status query before acting.
import { CALLBACK_REFERENCE_PARAM } from './collection.ts';
import { UUID_V4 } from './wire.ts';

/** Our ids are short (att_..., po_...); anything longer in externalId is not one of ours. */
const EXTERNAL_ID_LENGTH_MAX = 64;

export interface MtnCallbackTarget {
  /** Our X-Reference-Id, from the callback URL's query (we put it there) or the body if MTN ever adds it. */
  referenceId: string | null;
  /** The externalId we sent (our attempt or payout id). */
  externalId: string | null;
}

export function parseCallback(body: unknown, query: Record<string, string | undefined>): MtnCallbackTarget {
  const fromBody = (name: string): unknown =>
    body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  const candidates = [query[CALLBACK_REFERENCE_PARAM], fromBody('referenceId')];
  const referenceId =
    candidates.find((value): value is string => typeof value === 'string' && UUID_V4.test(value))?.toLowerCase() ??
    null;
  const external = fromBody('externalId');
  const externalText = typeof external === 'string' ? external : typeof external === 'number' ? String(external) : null;
  const externalId =
    externalText && externalText.length <= EXTERNAL_ID_LENGTH_MAX && /^[A-Za-z0-9_-]+$/.test(externalText)
      ? externalText
      : null;
  return { referenceId, externalId };
}
