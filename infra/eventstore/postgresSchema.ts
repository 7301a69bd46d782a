/** Tables and the append functions of the Postgres event store; every statement is idempotent. */
export const EVENT_STORE_SCHEMA = `
CREATE TABLE IF NOT EXISTS ledger_events (
  global_position bigserial NOT NULL,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id text NOT NULL,
  stream_revision bigint NOT NULL,
  -- The id of an append's first event, on that event only: a retried append is known by it. Every
  -- event's own id is in its metadata; indexing them all would cost each event written.
  first_event_id uuid,
  event_type text NOT NULL,
  schema_version integer NOT NULL,
  -- json, not jsonb: events are written once and read whole, and json is returned as stored
  -- where jsonb is re-serialised on every read.
  data json NOT NULL,
  metadata json NOT NULL,
  category text NOT NULL,
  project text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (stream_id, stream_revision),
  -- Commit order, in which $all is read: a position is (transaction id, global position).
  CONSTRAINT ledger_events_pkey PRIMARY KEY (transaction_id, global_position)
);
-- Data directories made before the switch to json are converted once.
DO $$ BEGIN
  IF (SELECT atttypid = 'jsonb'::regtype FROM pg_attribute
      WHERE attrelid = 'ledger_events'::regclass AND attname = 'data') THEN
    ALTER TABLE ledger_events ALTER COLUMN data TYPE json USING data::json,
                              ALTER COLUMN metadata TYPE json USING metadata::json;
  END IF;
END $$;
-- Data directories made when the key was the global position alone, with commit order in an index
-- of its own, get the one index: every index costs each event written.
DO $$ BEGIN
  IF (SELECT indnatts = 1 FROM pg_index WHERE indrelid = 'ledger_events'::regclass AND indisprimary) THEN
    ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_pkey,
      ADD CONSTRAINT ledger_events_pkey PRIMARY KEY (transaction_id, global_position);
  END IF;
END $$;
DROP INDEX IF EXISTS ledger_events_commit_order;
-- Data directories made when every event's id was a unique column keep those ids, now indexed as
-- first ids: a retry of any append they hold is still known.
DO $$ BEGIN
  IF EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'ledger_events'::regclass AND attname = 'event_id') THEN
    ALTER TABLE ledger_events RENAME COLUMN event_id TO first_event_id;
    ALTER TABLE ledger_events ALTER COLUMN first_event_id DROP NOT NULL,
      DROP CONSTRAINT ledger_events_event_id_key;
  END IF;
END $$;
CREATE UNIQUE INDEX IF NOT EXISTS ledger_events_first_event_id ON ledger_events (first_event_id)
  WHERE first_event_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS ledger_streams (
  stream_id text PRIMARY KEY,
  revision bigint NOT NULL
);

-- Earlier signatures: events as jsonb, then as json with a conflict raised as an error.
DROP FUNCTION IF EXISTS ledger_append(text, text, jsonb);
DROP FUNCTION IF EXISTS ledger_append(text, text, json);

-- True when an append expecting p_expected may not write to a stream at revision p_current (-1: none).
CREATE OR REPLACE FUNCTION ledger_conflict(p_expected text, p_current bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_expected
    WHEN 'any' THEN false
    WHEN 'no_stream' THEN p_current <> -1
    WHEN 'stream_exists' THEN p_current = -1
    ELSE p_current <> p_expected::bigint
  END
$$;

-- Both append functions answer one row per append: its last revision and position, or, when its
-- expected revision does not match, the stream's actual revision and a NULL position: that append
-- writes nothing, and the others of its batch are not affected. Events arrive as json, read once by
-- json_to_recordset, where jsonb would be parsed into a tree first: [{a (the append's place in its
-- batch, from 1), i (the event's place in its append, from 0), eventId (on the first event only),
-- type, schemaVersion, data, metadata, project}]. Each locks its stream and moves its revision in
-- one statement, and moves it back on a conflict: a stream never written then keeps revision -1,
-- which reads as no stream.
-- No NOTIFY in them: a notifying transaction holds a global lock through its commit, which would
-- serialise every append's WAL flush. The store announces appends after they commit instead.

-- One append, the common case: cheaper than a batch of one. It repeats the batch's steps for one
-- append rather than call a function shared with it: that call would cost each append about 5%.
CREATE OR REPLACE FUNCTION ledger_append(p_stream text, p_expected text, p_category text, p_events json)
RETURNS TABLE (append integer, revision bigint, transaction_id text, global_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_count integer := json_array_length(p_events);
  v_current bigint;
BEGIN
  INSERT INTO ledger_streams AS s (stream_id, revision) VALUES (p_stream, v_count - 1)
  ON CONFLICT (stream_id) DO UPDATE SET revision = s.revision + v_count
  RETURNING s.revision - v_count INTO v_current;
  IF ledger_conflict(p_expected, v_current) THEN
    UPDATE ledger_streams SET revision = v_current WHERE stream_id = p_stream;
    RETURN QUERY SELECT 1, v_current, NULL::text, NULL::bigint;
    RETURN;
  END IF;
  INSERT INTO ledger_events
    (stream_id, stream_revision, first_event_id, event_type, schema_version, data, metadata, category, project)
  SELECT p_stream, v_current + 1 + x.i, x."eventId", x.type, x."schemaVersion", x.data, x.metadata, p_category, x.project
  FROM json_to_recordset(p_events) AS x(i integer, "eventId" uuid, type text, "schemaVersion" integer,
         data json, metadata json, project text);
  -- Rows take their positions in order, and this session's last one is its own.
  RETURN QUERY SELECT 1, v_current + v_count, pg_current_xact_id()::text, currval('ledger_events_global_position_seq');
END $$;

-- Several appends in one transaction, in order; p_appends: [{stream, expected, count, category}].
CREATE OR REPLACE FUNCTION ledger_append_batch(p_appends json, p_events json)
RETURNS TABLE (append integer, revision bigint, transaction_id text, global_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  a record;
  v_current bigint;
  v_conflict boolean;
  v_streams text[] := '{}';
  v_categories text[] := '{}';
  v_first bigint[] := '{}';
  v_last bigint[] := '{}';
BEGIN
  FOR a IN SELECT x.stream, x.expected, x.count, x.category, x.ord::integer AS ord
           FROM ROWS FROM (json_to_recordset(p_appends) AS (stream text, expected text, count integer, category text))
                WITH ORDINALITY AS x(stream, expected, count, category, ord)
  LOOP
    INSERT INTO ledger_streams AS s (stream_id, revision) VALUES (a.stream, a.count - 1)
    ON CONFLICT (stream_id) DO UPDATE SET revision = s.revision + a.count
    RETURNING s.revision - a.count INTO v_current;
    v_conflict := ledger_conflict(a.expected, v_current);
    -- Every append takes its place in the arrays, so that they start at 1; NULL bounds keep a
    -- conflicting append's events out.
    v_streams[a.ord] := a.stream;
    v_categories[a.ord] := a.category;
    v_first[a.ord] := CASE WHEN v_conflict THEN NULL ELSE v_current + 1 END;
    v_last[a.ord] := CASE WHEN v_conflict THEN NULL ELSE v_current + a.count END;
    IF v_conflict THEN
      UPDATE ledger_streams SET revision = v_current WHERE stream_id = a.stream;
      append := a.ord; revision := v_current; transaction_id := NULL; global_position := NULL;
      RETURN NEXT;
    END IF;
  END LOOP;

  RETURN QUERY
    WITH written AS (
      INSERT INTO ledger_events AS e
        (stream_id, stream_revision, first_event_id, event_type, schema_version, data, metadata, category, project)
      SELECT v_streams[x.a], v_first[x.a] + x.i, x."eventId", x.type, x."schemaVersion", x.data, x.metadata,
             v_categories[x.a], x.project
      FROM json_to_recordset(p_events) AS x(a integer, i integer, "eventId" uuid, type text,
             "schemaVersion" integer, data json, metadata json, project text)
      WHERE v_first[x.a] IS NOT NULL
      RETURNING e.stream_id, e.stream_revision, e.global_position
    )
    -- Each append's answer is its last event.
    SELECT k.ord::integer, w.stream_revision, pg_current_xact_id()::text, w.global_position
    FROM written w JOIN unnest(v_streams, v_last) WITH ORDINALITY AS k(stream, last, ord)
      ON w.stream_id = k.stream AND w.stream_revision = k.last;
END $$;
`;
