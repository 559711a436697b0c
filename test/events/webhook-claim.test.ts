// Claiming due deliveries (events/store.ts claimDueDeliveries): each endpoint's earliest due deliveries,
// never more than its free share of tries in flight, earliest first across endpoints; what is not due
// yet, or claimed by someone else, stays. The claim finds endpoints by skipping through an index, so
// its cost follows the endpoints with pending deliveries, not the backlog.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { claimDueDeliveries } from '../../src/events/store.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { emitTestEvent, endpointOf, isolatedTestApp } from '../support/webhooks.ts';

const PER_ENDPOINT_MAX = 8;
const CLAIM_TTL_S = 30;

describe(`claiming due webhook deliveries (${storageKind})`, () => {
  let t: TestContext;

  before(async () => {
    // Its own database: a claim looks at every endpoint's deliveries.
    t = await isolatedTestApp();
  });
  after(() => t.close());

  /** n deliveries to the merchant's Test endpoint, due one millisecond apart from `offsetMs` ago onwards; ids in due order. */
  async function deliveries(m: CreatedMerchant, n: number, offsetMs: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const event = await emitTestEvent(t.db, m);
      const [row] = await t.db.query<{ id: string }>(
        `UPDATE webhook_deliveries SET next_try_at = now() - make_interval(secs => $2::double precision / 1000) WHERE event_id = $1 RETURNING id`,
        [event.id, offsetMs - i],
      );
      ids.push(row!.id);
    }
    return ids;
  }

  const claim = async (limit: number, inFlight: Map<string, number> = new Map()) =>
    (await claimDueDeliveries(t.db, limit, PER_ENDPOINT_MAX, CLAIM_TTL_S, inFlight)).map((d) => d.id);

  it("takes each endpoint's earliest due deliveries up to its free share, earliest first, and leaves the rest", async () => {
    const a = await t.merchant({ webhookUrl: 'https://a.example.com/hook' });
    const b = await t.merchant({ webhookUrl: 'https://b.example.com/hook' });
    const aIds = await deliveries(a, 12, 60_000); // due 60 s ago onwards
    const bIds = await deliveries(b, 3, 30_000); // due 30 s ago onwards: after all of a's
    // One of a's is a retry scheduled for later: not due, never claimed.
    const later = aIds.pop()!;
    await t.db.query(`UPDATE webhook_deliveries SET next_try_at = now() + interval '1 hour' WHERE id = $1`, [later]);
    const endpointA = (await endpointOf(t.db, a.merchant_id)).id;
    const endpointB = (await endpointOf(t.db, b.merchant_id)).id;

    // The single earliest, when one is asked for.
    const first = await claim(1);
    assert.deepEqual(first, [aIds[0]]);

    // a already has that one in flight: 7 more of a's (its earliest), then b's three.
    const second = await claim(64, new Map([[endpointA, 1]]));
    assert.deepEqual(second.sort(), [...aIds.slice(1, 8), ...bIds].sort());

    // a is full and b has nothing due left: nothing, although a has 3 due waiting.
    assert.deepEqual(
      await claim(
        64,
        new Map([
          [endpointA, 8],
          [endpointB, 3],
        ]),
      ),
      [],
    );

    // Two of a's tries finish: two more of a's, its next earliest.
    await t.db.query(
      `UPDATE webhook_deliveries SET status = 'delivered', locked_until = NULL, delivered_at = now() WHERE id = ANY($1)`,
      [aIds.slice(0, 2)],
    );
    assert.deepEqual(
      (
        await claim(
          64,
          new Map([
            [endpointA, 6],
            [endpointB, 3],
          ]),
        )
      ).sort(),
      aIds.slice(8, 10).sort(),
    );

    // A claim that lapsed (its worker died) is due again; the future retry still is not.
    await t.db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE id = $1`, [
      bIds[0],
    ]);
    assert.deepEqual(
      await claim(
        64,
        new Map([
          [endpointA, 8],
          [endpointB, 2],
        ]),
      ),
      [bIds[0]],
    );
    const [row] = await t.db.query<{ tries: number; locked: boolean }>(
      'SELECT tries, locked_until > now() AS locked FROM webhook_deliveries WHERE id = $1',
      [bIds[0]],
    );
    assert.deepEqual(row, { tries: 2, locked: true });
    assert.deepEqual(await claim(64), [aIds[10]], 'with nothing in flight by this worker, only what no claim holds');
  });
});
