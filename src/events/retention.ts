// Event retention (issue 37): events older than EVENT_RETENTION_DAYS whose deliveries have all finished
// (delivered, failed or skipped: none pending, none claimed) are written to the archive, then deleted with
// their deliveries and tries, so events, webhook_deliveries and webhook_delivery_tries stay bounded.
// Events inside the window stay listable and replayable; an archived event is gone from the API (404).
//
// The archive: gzip NDJSON in ARCHIVE_DIR, one line per event (the event's columns, the webhook body as
// `event`, its deliveries each with its tries), files named by the Africa/Accra month the events were
// created in, one file per month per batch: `events-YYYY-MM.<first event id>.ndjson.gz`. A batch is one
// transaction: its events and their deliveries locked, the file written to a temporary name, fsynced,
// renamed and its directory fsynced, and only then the rows deleted; commit. A crash before the commit
// leaves the rows, and the next run writes the same batch again under the same name (replacing the file:
// each event of the old file is in the new one or still in the database). Only when an event of the
// crashed batch was replayed meanwhile does the re-run start at another event, so after a crash an event
// may be in two files: readers dedupe by `id`. Card numbers never reach Sika (a card is its brand and last
// four digits), so an event, and the archive, holds nothing a payer's card could be taken from.
//
// One archiver at a time across every process (an advisory lock); a pass stops after
// ARCHIVE_PASS_MS_MAX and the worker's next pass goes on, so a first run on a big database archives its
// backlog a batch at a time without holding any transaction long or delaying shutdown.
import { mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Db, Queryable } from '../db/index.ts';
import { accraDay } from '../lib/accra-calendar.ts';
import { idTimeBound } from '../lib/ids.ts';
import * as store from './retention-store.ts';
import type { ArchivedDeliveryRow, ArchivedEventRow, ArchivedTryRow } from './retention-store.ts';

const gzipAsync = promisify(gzip);

/** Events per batch (one transaction each) on PostgreSQL... */
export const ARCHIVE_BATCH_ROWS_MAX = 5_000;
/** ...and on embedded storage, whose one connection every request waits for while a batch holds it. */
export const ARCHIVE_BATCH_ROWS_EMBEDDED = 500;
/** A pass (one run of the archive-events job) starts no new batch after this long. */
export const ARCHIVE_PASS_MS_MAX = 10_000;
const DAY_MS = 86_400_000;

export interface ArchiveOptions {
  retentionDays: number;
  archiveDir: string;
  /** Events per batch; by default ARCHIVE_BATCH_ROWS_MAX, ARCHIVE_BATCH_ROWS_EMBEDDED on embedded storage. */
  batchRows?: number;
  /** Stop starting batches after this many ms (ARCHIVE_PASS_MS_MAX); Infinity to archive everything due. */
  passMsMax?: number;
  now?: Date;
}

export interface ArchiveResult {
  /** Events archived and deleted. */
  archived: number;
  /** Batches committed (each at most batchRows events). */
  batches: number;
  /** The files written, full paths. */
  files: string[];
  /** False when another process held the archive lock (nothing done), or the pass ran out of time with more due. */
  done: boolean;
}

/** Every event created before an instant has an id below this (src/lib/ids.ts: ids begin with their time). */
export const eventIdBefore = (at: Date): string => idTimeBound('evt', at);

/** The Africa/Accra month of an instant, YYYY-MM (Ghana keeps UTC all year; the rule is written once). */
export const accraMonth = (at: Date): string => accraDay(at).slice(0, 7);

/** The archive file of a month's events of one batch. */
export const archiveFileName = (month: string, firstEventId: string) => `events-${month}.${firstEventId}.ndjson.gz`;

/** Archives and deletes every event past the window whose deliveries have finished, a batch at a time. */
export async function archiveOldEvents(db: Db, options: ArchiveOptions): Promise<ArchiveResult> {
  const now = options.now ?? new Date();
  const createdBefore = new Date(now.getTime() - options.retentionDays * DAY_MS);
  const idBelow = eventIdBefore(createdBefore);
  const limit = options.batchRows ?? (db.kind === 'embedded' ? ARCHIVE_BATCH_ROWS_EMBEDDED : ARCHIVE_BATCH_ROWS_MAX);
  const deadline = Date.now() + (options.passMsMax ?? ARCHIVE_PASS_MS_MAX);
  const result: ArchiveResult = { archived: 0, batches: 0, files: [], done: false };
  let afterId = '';
  for (;;) {
    const batch = await db.transaction((tx) => archiveBatch(tx, { idBelow, createdBefore, afterId, limit }, options));
    if (batch === null) return result; // another process is archiving
    result.archived += batch.archived;
    result.files.push(...batch.files);
    if (batch.archived > 0) result.batches++;
    if (batch.lastId === null || batch.scanned < limit) {
      result.done = true;
      return result;
    }
    afterId = batch.lastId;
    if (Date.now() >= deadline) return result;
  }
}

interface BatchOutcome {
  scanned: number;
  archived: number;
  lastId: string | null;
  files: string[];
}

async function archiveBatch(
  tx: Queryable,
  q: { idBelow: string; createdBefore: Date; afterId: string; limit: number },
  options: ArchiveOptions,
): Promise<BatchOutcome | null> {
  if (!(await store.takeArchiveLock(tx))) return null;
  const events = await store.lockOldFinishedEvents(tx, q);
  const lastId = events.at(-1)?.id ?? null;
  if (events.length === 0) return { scanned: 0, archived: 0, lastId, files: [] };
  const deliveries = await store.lockDeliveries(
    tx,
    events.map((e) => e.id),
  );
  // A delivery replayed to pending since the events were chosen keeps its event (for a later pass).
  const unfinished = new Set(deliveries.filter((d) => d.status === 'pending').map((d) => d.event_id));
  const chosen = events.filter((e) => !unfinished.has(e.id));
  if (chosen.length === 0) return { scanned: events.length, archived: 0, lastId, files: [] };
  const kept = deliveries.filter((d) => !unfinished.has(d.event_id));
  const tries =
    kept.length > 0
      ? await store.triesOf(
          tx,
          kept.map((d) => d.id),
        )
      : [];
  const files = await writeArchive(options.archiveDir, chosen, kept, tries);
  const archived = await store.deleteArchived(
    tx,
    chosen.map((e) => e.id),
  );
  return { scanned: events.length, archived, lastId, files };
}

/** One archive line: the event's columns, the webhook body it carried, its deliveries with their tries. */
function archiveLine(event: ArchivedEventRow, deliveries: ArchivedDeliveryRow[], tries: Map<string, ArchivedTryRow[]>) {
  return `${JSON.stringify({
    id: event.id,
    created_at: event.created_at.toISOString(),
    merchant_id: event.merchant_id,
    environment: event.environment,
    api_key_id: event.api_key_id,
    type: event.type,
    object_type: event.object_type,
    object_id: event.object_id,
    object_version: event.object_version,
    event: JSON.parse(event.payload) as unknown,
    deliveries: deliveries.map((d) => ({
      id: d.id,
      endpoint_id: d.endpoint_id,
      status: d.status,
      try_count: d.tries,
      last_http_status: d.last_http_status,
      last_error: d.last_error,
      created_at: d.created_at.toISOString(),
      updated_at: d.updated_at.toISOString(),
      delivered_at: d.delivered_at?.toISOString() ?? null,
      tries: (tries.get(d.id) ?? []).map((t) => ({
        try_number: t.try_number,
        tried_at: t.tried_at.toISOString(),
        http_status: t.http_status,
        latency_ms: t.latency_ms,
        error: t.error,
        response_excerpt: t.response_excerpt,
        worker_id: t.worker_id,
      })),
    })),
  })}\n`;
}

/** Writes the batch's files, one per Accra month, each durable (fsynced, renamed, directory fsynced) before it returns. */
async function writeArchive(
  dir: string,
  events: ArchivedEventRow[],
  deliveries: ArchivedDeliveryRow[],
  tries: ArchivedTryRow[],
): Promise<string[]> {
  const deliveriesOf = groupBy(deliveries, (d) => d.event_id);
  const triesOf = groupBy(tries, (t) => t.delivery_id);
  const byMonth = groupBy(events, (e) => accraMonth(e.created_at));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  for (const [month, monthEvents] of byMonth) {
    const text = monthEvents.map((e) => archiveLine(e, deliveriesOf.get(e.id) ?? [], triesOf)).join('');
    const path = join(dir, archiveFileName(month, monthEvents[0]!.id));
    await writeDurably(path, await gzipAsync(text));
    files.push(path);
  }
  await syncDirectory(dir);
  return files;
}

async function writeDurably(path: string, bytes: Buffer): Promise<void> {
  // A crash leaves at most this name behind, written over by the batch's next try.
  const temporary = `${path}.tmp`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(bytes);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const group = groups.get(k);
    if (group) group.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}
