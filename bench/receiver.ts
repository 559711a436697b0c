// The bench's webhook receiver: records when each event arrived. Its mode can be switched between runs:
// 'ok' answers 200 at once; 'timeout' never answers (Sika's delivery timeout ends the try); 'error'
// answers 500; 'reset' destroys the connection.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceiverMode = 'ok' | 'timeout' | 'error' | 'reset';

export interface Receipt {
  eventId: string;
  type: string;
  objectId: string | null;
  /** The request's path: which endpoint it was sent to. */
  path: string;
  atMs: number;
}

export interface Receiver {
  url: string;
  mode: ReceiverMode;
  /** Called for every event received in 'ok' mode. */
  onEvent: ((receipt: Receipt) => void) | null;
  received: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held = new Set<ServerResponse>();
  const receiver: Receiver = { url: '', mode: 'ok', onEvent: null, received: 0, close: async () => {} };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? '/';
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const atMs = Date.now();
      switch (receiver.mode) {
        case 'timeout':
          held.add(response);
          response.on('close', () => held.delete(response));
          return;
        case 'error':
          response.writeHead(500).end('receiver error');
          return;
        case 'reset':
          request.socket.destroy();
          return;
        case 'ok': {
          response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          receiver.received++;
          try {
            const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              id: string;
              type: string;
              data?: Record<string, { id?: string } | undefined>;
            };
            const object = Object.values(event.data ?? {}).find((value) => typeof value?.id === 'string');
            receiver.onEvent?.({ eventId: event.id, type: event.type, objectId: object?.id ?? null, path, atMs });
          } catch {
            /* not an event: counted, not recorded */
          }
        }
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = async () => {
    for (const response of held) response.socket?.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
