// An SMS stand-in for tests: one node:http server on 127.0.0.1 (a free port) speaking the two wire protocols
// src/sms adapts, as their public documentation writes them (src/sms/hubtel.ts and src/sms/mnotify.ts cite the
// pages). Where a provider documents nothing, the choice made here is marked "not documented".
//
//   const sms = await startSmsStandIn({ hubtel: { clientId, clientSecret }, mnotify: { apiKey } });
//   sms.hubtelUrl   -> http://127.0.0.1:PORT/v1   (HUBTEL_SMS_URL)
//   sms.mnotifyUrl  -> http://127.0.0.1:PORT/api  (MNOTIFY_URL)
//   await sms.close()
//
// Hubtel: POST /v1/messages/send, `Authorization: Basic base64(clientId:clientSecret)` (else 401), JSON
// {From, To, Content}: From 1-11 characters, To a number, Content not empty (else 400 with a status code
// of the response-code page: 1 invalid destination, 2 invalid source, 6 content rejected). Taken: 200
// {rate, messageId (a UUID), status: 0, networkId, clientReference: null, statusDescription}.
// mNotify: POST /api/sms/quick?key=KEY (else 401: not documented beyond "Unauthorized"), JSON {recipient:
// [numbers], sender (≤ 11), message, is_schedule, schedule_date}: empty fields answer code 4001, a sender
// over 11 characters 4003 (HTTP 200 with status "error": the HTTP status of a 4xxx code is not documented).
// Taken: 200 {status: 'success', code: '2000', message, summary: {_id, message_id, type, total_sent,
// contacts, total_rejected, numbers_sent, credit_used, credit_left}}.
//
// What the next request to a provider does (next(provider, behaviour), in order, one each):
//   { kind: 'http_error', status }   answers that status without taking the message (5xx, 429)
//   { kind: 'refuse' }               refuses it as the provider does for no credit (Hubtel HTTP 402; mNotify
//                                    code 4004), without taking it
//   { kind: 'lose_answer' }          takes the message, then destroys the socket without a byte of answer
//   { kind: 'hang' }                 takes the message and never answers (until close())
// What it received: `requests` (every request: provider, path, query, headers, body, outcome) and `sent`
// (the messages it took: provider, to, sender, text, messageId).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type SmsStandInProvider = 'hubtel' | 'mnotify';

export type SmsStandInBehaviour =
  | { kind: 'http_error'; status: number }
  | { kind: 'refuse' }
  | { kind: 'lose_answer' }
  | { kind: 'hang' };

export interface SmsStandInRequest {
  provider: SmsStandInProvider | null;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** What the stand-in did: 'taken', 'refused', 'unauthorized', 'invalid', 'http_error', 'lost', 'hung', 'not_found'. */
  outcome: string;
}

export interface SmsStandInMessage {
  provider: SmsStandInProvider;
  to: string;
  sender: string;
  text: string;
  messageId: string;
}

export interface SmsStandIn {
  url: string;
  hubtelUrl: string;
  mnotifyUrl: string;
  requests: SmsStandInRequest[];
  sent: SmsStandInMessage[];
  next(provider: SmsStandInProvider, behaviour: SmsStandInBehaviour): void;
  close(): Promise<void>;
}

export interface SmsStandInOptions {
  hubtel?: { clientId: string; clientSecret: string };
  mnotify?: { apiKey: string };
}

export async function startSmsStandIn(options: SmsStandInOptions): Promise<SmsStandIn> {
  const requests: SmsStandInRequest[] = [];
  const sent: SmsStandInMessage[] = [];
  const queued: Record<SmsStandInProvider, SmsStandInBehaviour[]> = { hubtel: [], mnotify: [] };
  const sockets = new Set<Socket>();

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      return text;
    }
  }

  /** A behaviour queued for this provider, applied before (refusals) or after (lost answers) taking it. */
  function applyBehaviour(
    provider: SmsStandInProvider,
    record: SmsStandInRequest,
    res: ServerResponse,
    take: () => void,
    refuse: () => void,
  ): boolean {
    const behaviour = queued[provider].shift();
    if (!behaviour) return false;
    if (behaviour.kind === 'http_error') {
      record.outcome = 'http_error';
      json(res, behaviour.status, { message: 'stand-in error' });
    } else if (behaviour.kind === 'refuse') {
      record.outcome = 'refused';
      refuse();
    } else if (behaviour.kind === 'lose_answer') {
      take();
      record.outcome = 'lost';
      res.socket?.destroy();
    } else {
      take();
      record.outcome = 'hung';
    }
    return true;
  }

  function hubtel(req: IncomingMessage, body: unknown, record: SmsStandInRequest, res: ServerResponse) {
    const creds = options.hubtel;
    const expected = creds
      ? `Basic ${Buffer.from(`${creds.clientId}:${creds.clientSecret}`).toString('base64')}`
      : null;
    if (!expected || req.headers.authorization !== expected) {
      record.outcome = 'unauthorized';
      return json(res, 401, { message: 'The request authorization failed.' });
    }
    const b = (body ?? {}) as Record<string, unknown>;
    const invalid = (status: number, description: string) => {
      record.outcome = 'invalid';
      json(res, 400, { status, statusDescription: description });
    };
    if (typeof b.To !== 'string' || !/^\+?[0-9]{9,15}$/.test(b.To)) return invalid(1, 'Invalid destination address');
    if (typeof b.From !== 'string' || b.From.length < 1 || b.From.length > 11)
      return invalid(2, 'Invalid source address');
    if (typeof b.Content !== 'string' || !b.Content)
      return invalid(6, 'The message content was rejected or is invalid');
    const message: SmsStandInMessage = {
      provider: 'hubtel',
      to: b.To,
      sender: b.From,
      text: b.Content,
      messageId: randomUUID(),
    };
    const take = () => sent.push(message);
    const refuse = () => json(res, 402, { message: 'Your account does not have enough messaging credit.' });
    if (applyBehaviour('hubtel', record, res, take, refuse)) return;
    take();
    record.outcome = 'taken';
    json(res, 200, {
      rate: 0.0309,
      messageId: message.messageId,
      status: 0,
      networkId: '62001',
      clientReference: null,
      statusDescription: 'request submitted successfully',
    });
  }

  function mnotify(query: Record<string, string>, body: unknown, record: SmsStandInRequest, res: ServerResponse) {
    if (!options.mnotify || query.key !== options.mnotify.apiKey) {
      record.outcome = 'unauthorized';
      return json(res, 401, { status: 'error', code: '401', message: 'Unauthorized' });
    }
    const b = (body ?? {}) as Record<string, unknown>;
    const error = (code: string, message: string) => {
      record.outcome = 'invalid';
      json(res, 200, { status: 'error', code, message });
    };
    const recipients = Array.isArray(b.recipient) ? b.recipient : [];
    if (
      recipients.length === 0 ||
      recipients.some((r) => typeof r !== 'string' || !/^[0-9]{10,12}$/.test(r)) ||
      typeof b.sender !== 'string' ||
      !b.sender ||
      typeof b.message !== 'string' ||
      !b.message
    )
      return error('4001', 'the recipient field, sender field and message field must not be empty');
    if (b.sender.length > 11) return error('4003', 'the sender must not be greater than 11 in length');
    const campaign = randomUUID();
    const messages = recipients.map((to) => ({
      provider: 'mnotify' as const,
      to: to as string,
      sender: b.sender as string,
      text: b.message as string,
      messageId: campaign,
    }));
    const take = () => sent.push(...messages);
    const refuse = () => error('4004', 'credit is not enough to send message to recipients');
    if (applyBehaviour('mnotify', record, res, take, refuse)) {
      if (record.outcome === 'invalid') record.outcome = 'refused';
      return;
    }
    take();
    record.outcome = 'taken';
    json(res, 200, {
      status: 'success',
      code: '2000',
      message: 'messages sent successfully',
      summary: {
        _id: campaign,
        message_id: randomUUID().slice(0, 8),
        type: 'API QUICK SMS',
        total_sent: recipients.length,
        contacts: recipients.length,
        total_rejected: 0,
        numbers_sent: recipients,
        credit_used: recipients.length,
        credit_left: 1000,
      },
    });
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const query = Object.fromEntries(url.searchParams);
      const body = await readBody(req);
      const provider: SmsStandInProvider | null =
        url.pathname === '/v1/messages/send' ? 'hubtel' : url.pathname === '/api/sms/quick' ? 'mnotify' : null;
      const record: SmsStandInRequest = {
        provider,
        method: req.method ?? '',
        path: url.pathname,
        query,
        headers: req.headers,
        body,
        outcome: 'not_found',
      };
      requests.push(record);
      if (req.method !== 'POST' || !provider) return json(res, 404, { message: 'not found' });
      if (provider === 'hubtel') hubtel(req, body, record, res);
      else mnotify(query, body, record, res);
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hubtelUrl: `${url}/v1`,
    mnotifyUrl: `${url}/api`,
    requests,
    sent,
    next(provider, behaviour) {
      queued[provider].push(behaviour);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
