/** Tables and the append function of the Postgres event store; every statement is idempotent. */
export const EVENT_STORE_SCHEMA = `
CREATE TABLE IF NOT EXISTS ledger_events (
  global_position bigserial PRIMARY KEY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id text NOT NULL,
  stream_revision bigint NOT NULL,
  event_id uuid NOT NULL UNIQUE,
  event_type text NOT NULL,
  schema_version integer NOT NULL,
  -- json, not jsonb: events are written once and read whole, and json is returned as stored
  -- where jsonb is re-serialised on every read.
  data json NOT NULL,
  metadata json NOT NULL,
  category text NOT NULL,
  project text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (stream_id, stream_revision)
);
-- Data directories made before the switch to json are converted once.
DO $$ BEGIN
  IF (SELECT atttypid = 'jsonb'::regtype FROM pg_attribute
      WHERE attrelid = 'ledger_events'::regclass AND attname = 'data') THEN
    ALTER TABLE ledger_events ALTER COLUMN data TYPE json USING data::json,
                              ALTER COLUMN metadata TYPE json USING metadata::json;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS ledger_events_commit_order ON ledger_events (transaction_id, global_position);

CREATE TABLE IF NOT EXISTS ledger_streams (
  stream_id text PRIMARY KEY,
  revision bigint NOT NULL
);

-- Its events arrive as json: read once by json_to_recordset, where jsonb would be parsed into a tree first.
DROP FUNCTION IF EXISTS ledger_append(text, text, jsonb);
-- One round trip per append; answers one row: the last revision and position written.
-- Raises SQLSTATE CL001 (detail: the actual revision) on a mismatch. A retried append (same first
-- event id) fails here, on its revision or on the unique event id, and the store then answers with
-- what the original wrote: looking it up first would cost every append a read of its events.
CREATE OR REPLACE FUNCTION ledger_append(p_stream text, p_expected text, p_events json)
RETURNS TABLE (revision bigint, transaction_id text, global_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_current bigint;
  v_count integer := json_array_length(p_events);
BEGIN
  -- Locks the stream and moves its revision in one statement; an error below undoes it.
  INSERT INTO ledger_streams AS s (stream_id, revision) VALUES (p_stream, v_count - 1)
  ON CONFLICT (stream_id) DO UPDATE SET revision = s.revision + v_count
  RETURNING s.revision - v_count INTO v_current;

  IF (p_expected = 'no_stream' AND v_current <> -1)
     OR (p_expected = 'stream_exists' AND v_current = -1)
     OR (p_expected NOT IN ('any', 'no_stream', 'stream_exists') AND v_current <> p_expected::bigint) THEN
    RAISE EXCEPTION USING ERRCODE = 'CL001', MESSAGE = 'wrong expected revision', DETAIL = v_current::text;
  END IF;

  RETURN QUERY
    WITH written AS (
      INSERT INTO ledger_events AS e
        (stream_id, stream_revision, event_id, event_type, schema_version, data, metadata, category, project)
      SELECT p_stream, v_current + x.ord, x."eventId", x.type, x."schemaVersion", x.data, x.metadata, x.category, x.project
      FROM ROWS FROM (json_to_recordset(p_events) AS ("eventId" uuid, type text, "schemaVersion" integer,
             data json, metadata json, category text, project text))
           WITH ORDINALITY AS x("eventId", type, "schemaVersion", data, metadata, category, project, ord)
      RETURNING e.stream_revision, e.global_position
    )
    SELECT max(w.stream_revision), pg_current_xact_id()::text, max(w.global_position) FROM written w;
  -- No NOTIFY here: a notifying transaction holds a global lock through its commit, which would
  -- serialise every append's WAL flush. The store announces appends after they commit instead.
END $$;
`;
