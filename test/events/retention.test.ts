// Event retention (issue 37, item 4): events past EVENT_RETENTION_DAYS whose deliveries have all finished are
// written to the gzip NDJSON archive (read back here with zlib), then deleted with their deliveries and tries;
// a pending delivery keeps its event; events inside the window stay; a second run is a no-op; batches; one
// archiver at a time; an archived event is gone from the API (over real HTTP). Both storages, each file on a
// database of its own (the archiver works across every merchant).
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { loadConfig } from '../../src/config/index.ts';
import {
  accraMonth,
  archiveFileName,
  archiveOldEvents,
  ARCHIVE_BATCH_ROWS_EMBEDDED,
  eventIdBefore,
} from '../../src/events/retention.ts';
import { deleteArchived } from '../../src/events/retention-store.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { emitTestEvent, endpointOf, isolatedTestApp, testKeyId } from '../support/webhooks.ts';

const DAY_MS = 86_400_000;
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

type Status = 'pending' | 'delivered' | 'failed' | 'skipped';

interface ArchiveLine {
  id: string;
  created_at: string;
  merchant_id: string;
  environment: string;
  type: string;
  object_id: string;
  event: { id: string; type: string; data: unknown };
  deliveries: {
    id: string;
    status: string;
    try_count: number;
    tries: { try_number: number; http_status: number | null; worker_id: string }[];
  }[];
}

describe(`event retention and archive (${storageKind})`, () => {
  let t: TestContext;
  let m: CreatedMerchant;
  let endpointId: string;
  let keyId: string;
  const dirs: string[] = [];
  before(async () => {
    t = await isolatedTestApp();
    m = await t.merchant({ webhookUrl: 'https://example.com/hook' });
    endpointId = (await endpointOf(t.db, m.merchant_id)).id;
    keyId = await testKeyId(t.db, m.merchant_id);
  });
  after(async () => {
    await t?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const archiveDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sika-archive-'));
    dirs.push(dir);
    return dir;
  };

  /** An event written at `at` (its id time-sortable from that instant, as newId makes them), with deliveries and tries. */
  async function oldEvent(at: Date, deliveries: { status: Status; tries?: number }[] = []): Promise<string> {
    let random = '';
    for (const byte of randomBytes(16)) random += CROCKFORD[byte % 32];
    const id = `${eventIdBefore(at)}${random}`;
    const objectId = `cs_test_${randomBytes(6).toString('hex')}`;
    const payload = {
      id,
      type: 'checkout.session.completed',
      created_at: at.toISOString(),
      environment: 'test',
      livemode: false,
      version: 1,
      data: { session: { id: objectId, status: 'success', amount_minor: 1000, currency: 'GHS' } },
    };
    await t.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO events (id, merchant_id, environment, api_key_id, type, object_type, object_id, object_version, payload, created_at)
         VALUES ($1, $2, 'test', $3, 'checkout.session.completed', 'checkout.session', $4, 1, $5, $6)`,
        [id, m.merchant_id, keyId, objectId, JSON.stringify(payload), at],
      );
      for (const d of deliveries) {
        const deliveryId = randomUUID();
        const tries = d.tries ?? (d.status === 'pending' ? 0 : 1);
        // One endpoint per (event, endpoint): further deliveries of the same event go to other endpoints.
        const endpoint =
          d === deliveries[0]
            ? endpointId
            : (
                await tx.query<{ id: string }>(
                  `INSERT INTO webhook_endpoints (id, merchant_id, environment, api_key_id, url, secret, status)
                   SELECT gen_random_uuid(), merchant_id, environment, api_key_id, url, secret, 'disabled'
                     FROM webhook_endpoints WHERE id = $1 RETURNING id`,
                  [endpointId],
                )
              )[0]!.id;
        await tx.query(
          `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, status, tries, created_at, updated_at, delivered_at)
           VALUES ($1, $2, $3, $4, 'test', $5, $6, $7, $7, CASE WHEN $5 = 'delivered' THEN $7::timestamptz END)`,
          [deliveryId, id, endpoint, m.merchant_id, d.status, tries, at],
        );
        for (let n = 1; n <= tries; n++)
          await tx.query(
            `INSERT INTO webhook_delivery_tries (delivery_id, try_number, tried_at, http_status, latency_ms, error, worker_id)
             VALUES ($1, $2, $3, $4, 12, NULL, 'w1')`,
            [deliveryId, n, at, n === tries && d.status === 'delivered' ? 200 : 500],
          );
      }
    });
    return id;
  }

  const counts = async (ids: string[]) => {
    const [row] = await t.db.query<{ events: number; deliveries: number; tries: number }>(
      `SELECT (SELECT count(*)::int FROM events WHERE id = ANY($1::text[])) AS events,
              (SELECT count(*)::int FROM webhook_deliveries WHERE event_id = ANY($1::text[])) AS deliveries,
              (SELECT count(*)::int FROM webhook_delivery_tries t JOIN webhook_deliveries d ON d.id = t.delivery_id
                WHERE d.event_id = ANY($1::text[])) AS tries`,
      [ids],
    );
    return row!;
  };

  const readArchive = (files: string[]): ArchiveLine[] =>
    files.flatMap((file) =>
      gunzipSync(readFileSync(file))
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ArchiveLine),
    );

  const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

  it('the id bound follows newId: an event written now is between the bounds of a second ago and a second on', async () => {
    const event = await emitTestEvent(t.db, m);
    assert.ok(event.id > eventIdBefore(new Date(Date.now() - 1_000)));
    assert.ok(event.id < eventIdBefore(new Date(Date.now() + 1_000)));
  });

  it('archives old finished events to gzip NDJSON, then deletes them with their deliveries and tries; pending and recent ones stay; a second run does nothing', async () => {
    const dir = archiveDir();
    const at = daysAgo(120);
    const delivered = await oldEvent(at, [{ status: 'delivered', tries: 3 }]);
    const failed = await oldEvent(new Date(at.getTime() + 1), [
      { status: 'failed', tries: 2 },
      { status: 'skipped', tries: 0 },
    ]);
    const noEndpoint = await oldEvent(new Date(at.getTime() + 2));
    const pending = await oldEvent(new Date(at.getTime() + 3), [
      { status: 'delivered' },
      { status: 'pending', tries: 1 },
    ]);
    const recent = await oldEvent(daysAgo(30), [{ status: 'delivered' }]);
    const fresh = (await emitTestEvent(t.db, m)).id;
    const archivedIds = [delivered, failed, noEndpoint];

    const result = await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir });
    assert.equal(result.archived, 3);
    assert.equal(result.done, true);
    assert.deepEqual(result.files, [join(dir, archiveFileName(accraMonth(at), delivered))]);
    assert.deepEqual(readdirSync(dir), [archiveFileName(accraMonth(at), delivered)], 'no temporary file left');

    const lines = readArchive(result.files);
    assert.deepEqual(
      lines.map((l) => l.id),
      archivedIds,
      'each archived event once, in id order',
    );
    const first = lines[0]!;
    assert.equal(first.merchant_id, m.merchant_id);
    assert.equal(first.environment, 'test');
    assert.equal(first.created_at, at.toISOString());
    assert.equal(first.event.id, delivered, 'the webhook body the event carried');
    assert.equal(first.deliveries.length, 1);
    assert.equal(first.deliveries[0]!.status, 'delivered');
    assert.deepEqual(
      first.deliveries[0]!.tries.map((x) => [x.try_number, x.http_status]),
      [
        [1, 500],
        [2, 500],
        [3, 200],
      ],
    );
    assert.deepEqual(lines[1]!.deliveries.map((d) => [d.status, d.try_count, d.tries.length]).sort(), [
      ['failed', 2, 2],
      ['skipped', 0, 0],
    ]);
    assert.deepEqual(lines[2]!.deliveries, []);

    assert.deepEqual(await counts(archivedIds), { events: 0, deliveries: 0, tries: 0 });
    assert.deepEqual(
      await counts([pending]),
      { events: 1, deliveries: 2, tries: 2 },
      'a pending delivery keeps its event',
    );
    assert.deepEqual(await counts([recent]), { events: 1, deliveries: 1, tries: 1 }, 'inside the window');
    assert.equal((await counts([fresh])).events, 1);

    const again = await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir });
    assert.deepEqual(again, { archived: 0, batches: 0, files: [], done: true });
    assert.equal(readdirSync(dir).length, 1);

    // Once its last delivery finishes, the pending one goes too.
    await t.db.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE event_id = $1`, [pending]);
    const later = await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir });
    assert.equal(later.archived, 1);
    assert.deepEqual(
      readArchive(later.files).map((l) => l.id),
      [pending],
    );
    assert.deepEqual(await counts([pending]), { events: 0, deliveries: 0, tries: 0 });
  });

  it('works in batches, one file per Accra month per batch, the backlog oldest first', async () => {
    const dir = archiveDir();
    const june = new Date(Date.now() - 400 * DAY_MS);
    const july = new Date(june.getTime() + 35 * DAY_MS);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await oldEvent(new Date(june.getTime() + i), [{ status: 'delivered' }]));
    for (let i = 0; i < 4; i++) ids.push(await oldEvent(new Date(july.getTime() + i), [{ status: 'failed' }]));
    assert.notEqual(accraMonth(june), accraMonth(july));

    const result = await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir, batchRows: 2 });
    assert.equal(result.archived, 7);
    assert.equal(result.batches, 4, '2 + 2 + 2 + 1');
    assert.equal(result.done, true);
    // Batches [j0 j1] [j2 k0] [k1 k2] [k3]: the second splits at the month.
    assert.deepEqual(
      result.files.map((f) => f.slice(dir.length + 1)),
      [
        archiveFileName(accraMonth(june), ids[0]!),
        archiveFileName(accraMonth(june), ids[2]!),
        archiveFileName(accraMonth(july), ids[3]!),
        archiveFileName(accraMonth(july), ids[4]!),
        archiveFileName(accraMonth(july), ids[6]!),
      ],
    );
    assert.deepEqual(
      readArchive(result.files).map((l) => l.id),
      ids,
    );
    assert.deepEqual(await counts(ids), { events: 0, deliveries: 0, tries: 0 });
  });

  it('a pass out of time stops between batches and the next pass goes on', async () => {
    const dir = archiveDir();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(await oldEvent(new Date(Date.now() - 200 * DAY_MS + i), [{ status: 'delivered' }]));
    const first = await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir, batchRows: 2, passMsMax: 0 });
    assert.equal(first.archived, 2);
    assert.equal(first.done, false);
    const rest = await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir, batchRows: 2 });
    assert.equal(rest.archived, 3);
    assert.deepEqual(
      readArchive([...first.files, ...rest.files]).map((l) => l.id),
      ids,
    );
  });

  it('two archivers at once archive each event once', async () => {
    const dir = archiveDir();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(await oldEvent(new Date(Date.now() - 150 * DAY_MS + i), [{ status: 'delivered' }]));
    const results = await Promise.all([
      archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir, batchRows: 2 }),
      archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir, batchRows: 2 }),
    ]);
    assert.equal(results[0]!.archived + results[1]!.archived, 6);
    const lines = readArchive(results.flatMap((r) => r.files));
    assert.deepEqual(lines.map((l) => l.id).sort(), [...ids].sort());
    // Whatever a lost lock left (the other pass saw nothing to do), a third pass finds nothing.
    assert.equal((await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir })).archived, 0);
  });

  it('the delete never takes an event whose delivery went back to pending', async () => {
    const id = await oldEvent(daysAgo(100), [{ status: 'pending' }]);
    assert.equal(await t.db.transaction((tx) => deleteArchived(tx, [id])), 0);
    assert.equal((await counts([id])).events, 1);
    await t.db.query(`UPDATE webhook_deliveries SET status = 'delivered' WHERE event_id = $1`, [id]);
    assert.equal(await t.db.transaction((tx) => deleteArchived(tx, [id])), 1);
  });

  it('an archived event is gone from the API: retrieve and replay 404, the list leaves it out (over HTTP)', async () => {
    const dir = archiveDir();
    const base = await t.listen();
    const id = await oldEvent(daysAgo(95), [{ status: 'delivered' }]);
    const kept = await oldEvent(daysAgo(60), [{ status: 'delivered' }]);
    const get = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${m.test_api_key}` } });
    const listed = async () =>
      (
        (await (
          await get(`/api/v1/events?limit=100&created_lt=${encodeURIComponent(daysAgo(50).toISOString())}`)
        ).json()) as {
          data: { id: string }[];
        }
      ).data.map((e) => e.id);
    assert.equal((await get(`/api/v1/events/${id}`)).status, 200, 'listable before');
    assert.ok((await listed()).includes(id));

    assert.equal((await archiveOldEvents(t.db, { retentionDays: 90, archiveDir: dir })).archived, 1);

    const gone = await get(`/api/v1/events/${id}`);
    assert.equal(gone.status, 404);
    assert.equal(((await gone.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
    const replay = await fetch(`${base}/api/v1/events/${id}/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.test_api_key}`, 'idempotency-key': `replay-${id}` },
    });
    assert.equal(replay.status, 404, await replay.text());
    assert.deepEqual(await listed(), [kept], 'inside the window: still listed');
    assert.equal((await get(`/api/v1/events/${kept}`)).status, 200);
  });

  it('EVENT_RETENTION_DAYS and ARCHIVE_DIR: defaults, validation', () => {
    const base = { BASE_URL: 'http://127.0.0.1:3000' };
    const config = loadConfig({ ...base, DATA_DIR: '/srv/sika' });
    assert.equal(config.eventRetentionDays, 90);
    assert.equal(config.archiveDir, '/srv/sika/archive');
    assert.equal(loadConfig(base).archiveDir, join('.sika', 'archive'));
    assert.equal(loadConfig({ ...base, ARCHIVE_DIR: '/backup/events' }).archiveDir, '/backup/events');
    assert.equal(loadConfig({ ...base, EVENT_RETENTION_DAYS: '400' }).eventRetentionDays, 400);
    for (const bad of ['0', '6', 'ninety', '-5'])
      assert.throws(
        () => loadConfig({ ...base, EVENT_RETENTION_DAYS: bad }),
        /EVENT_RETENTION_DAYS must be a whole number from 7/,
      );
    assert.ok(ARCHIVE_BATCH_ROWS_EMBEDDED > 0);
  });
});
