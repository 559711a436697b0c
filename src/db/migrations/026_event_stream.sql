-- Issue 19: the event stream (GET /api/v1/events/stream, src/events/stream.ts) and event replays over
-- the API (src/events/replay.ts).
--
-- events.xact_id: the id of the transaction that wrote the event. created_at cannot order a stream: it is
-- taken before the transaction commits, and concurrent transactions commit out of order, so a reader that
-- has passed created_at T can still see an event at T - 1 ms appear later. The stream only reads events
-- whose writing transaction is older than the oldest transaction still running
-- (xact_id < pg_snapshot_xmin(pg_current_snapshot())): every such transaction has ended, so no event can
-- appear below that line any more, and (xact_id, id) is an order in which nothing is ever inserted behind
-- a reader's cursor. Existing rows take the id of this migration's transaction.
ALTER TABLE events ADD COLUMN xact_id xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_stream_idx ON events (merchant_id, environment, xact_id, id);

-- A range replay (POST /api/v1/events/replay) is allowed once per EVENT_REPLAY_INTERVAL_S per API key,
-- across every process: the key's row holds the time before which the next one is refused.
CREATE TABLE event_replay_windows (
  api_key_id uuid PRIMARY KEY,
  until timestamptz NOT NULL
);

-- Replays over the API are audited with the API key as the actor.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check CHECK (actor_type IN ('operator', 'user', 'system', 'api_key'));
