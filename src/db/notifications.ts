// LISTEN on PostgreSQL over a connection of its own, kept open: a dropped connection is reconnected on a
// bounded backoff, and the subscriber is told (reset) whenever messages may have been missed, so a cache
// kept fresh by these messages is dropped rather than trusted (src/accounts/api-keys.ts).
import type pg from 'pg';
import { checkChannelName, type NotificationHandlers, type Subscription } from './types.ts';

const RECONNECT_DELAY_MIN_MS = 100;
const RECONNECT_DELAY_MAX_MS = 2_000;

export async function listenPostgres(
  newClient: () => pg.Client,
  channel: string,
  handlers: NotificationHandlers,
): Promise<Subscription> {
  checkChannelName(channel);
  let client: pg.Client | null = null;
  let live = false;
  let closed = false;
  let delayMs = RECONNECT_DELAY_MIN_MS;
  let timer: NodeJS.Timeout | null = null;

  const lost = (which: pg.Client) => {
    if (which !== client) return;
    client = null;
    if (live) {
      live = false;
      handlers.reset();
    }
    which.end().catch(() => {});
    schedule();
  };

  const schedule = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, delayMs);
    timer.unref();
    delayMs = Math.min(delayMs * 2, RECONNECT_DELAY_MAX_MS);
  };

  const connect = async () => {
    const next = newClient();
    client = next;
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    next.on('notification', (message) => {
      if (message.channel === channel && next === client) handlers.message(message.payload ?? '');
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch {
      lost(next);
      return;
    }
    if (closed || next !== client) return;
    delayMs = RECONNECT_DELAY_MIN_MS;
    live = true;
    // Whatever was cached before this connection listened may be stale.
    handlers.reset();
  };

  await connect();
  return {
    get live() {
      return live;
    },
    async close() {
      closed = true;
      live = false;
      if (timer) clearTimeout(timer);
      const last = client;
      client = null;
      await last?.end().catch(() => {});
    },
  };
}
