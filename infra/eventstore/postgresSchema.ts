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

-- Earlier signatures: events as jsonb, then as json, then as one json document.
DROP FUNCTION IF EXISTS ledger_append(text, text, jsonb);
DROP FUNCTION IF EXISTS ledger_append(text, text, json);
DROP FUNCTION IF EXISTS ledger_append(text, text, text, json);
DROP FUNCTION IF EXISTS ledger_append_batch(json, json);

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
-- writes nothing, and the others of its batch are not affected. Events arrive as columns, one array
-- each, in order (types, schema versions, data, metadata, projects): an array takes each value
-- whole, where a JSON document of events would be parsed once more to take it apart. Each locks
-- its stream and moves its revision in one statement, and moves it back on a conflict: a stream
-- never written then keeps revision -1, which reads as no stream.
-- No NOTIFY in them: a notifying transaction holds a global lock through its commit, which would
-- serialise every append's WAL flush. The store announces appends after they commit instead.

-- One append, the common case: cheaper than a batch of one. It repeats the batch's steps for one
-- append rather than call a function shared with it: that call would cost each append about 5%.
CREATE OR REPLACE FUNCTION ledger_append(p_stream text, p_expected text, p_category text,
  p_first_event_id uuid, p_types text[], p_versions integer[], p_data json[], p_metadata json[], p_projects text[])
RETURNS TABLE (append integer, revision bigint, transaction_id text, global_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_count integer := cardinality(p_types);
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
  SELECT p_stream, v_current + x.n, CASE WHEN x.n = 1 THEN p_first_event_id END, x.type, x.version, x.data,
         x.metadata, p_category, x.project
  FROM unnest(p_types, p_versions, p_data, p_metadata, p_projects) WITH ORDINALITY
       AS x(type, version, data, metadata, project, n);
  -- Rows take their positions in order, and this session's last one is its own.
  RETURN QUERY SELECT 1, v_current + v_count, pg_current_xact_id()::text, currval('ledger_events_global_position_seq');
END $$;

-- Several appends in one transaction, in order: the first five arrays have an element per append
-- (stream, expected revision, category, first event id, number of events), p_appends one per event,
-- its append's place in them.
CREATE OR REPLACE FUNCTION ledger_append_batch(p_streams text[], p_expected text[], p_categories text[],
  p_first_event_ids uuid[], p_counts integer[], p_appends integer[],
  p_types text[], p_versions integer[], p_data json[], p_metadata json[], p_projects text[])
RETURNS TABLE (append integer, revision bigint, transaction_id text, global_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_current bigint;
  v_conflict boolean;
  -- By append: the place of its first event in the event arrays, and the revisions of its first
  -- and last events, NULL when it conflicts, which keeps its events out.
  v_start integer[] := '{}';
  v_first bigint[] := '{}';
  v_last bigint[] := '{}';
  v_next integer := 1;
BEGIN
  FOR k IN 1 .. cardinality(p_streams) LOOP
    v_start[k] := v_next;
    v_next := v_next + p_counts[k];
    INSERT INTO ledger_streams AS s (stream_id, revision) VALUES (p_streams[k], p_counts[k] - 1)
    ON CONFLICT (stream_id) DO UPDATE SET revision = s.revision + p_counts[k]
    RETURNING s.revision - p_counts[k] INTO v_current;
    v_conflict := ledger_conflict(p_expected[k], v_current);
    v_first[k] := CASE WHEN v_conflict THEN NULL ELSE v_current + 1 END;
    v_last[k] := CASE WHEN v_conflict THEN NULL ELSE v_current + p_counts[k] END;
    IF v_conflict THEN
      UPDATE ledger_streams SET revision = v_current WHERE stream_id = p_streams[k];
      append := k; revision := v_current; transaction_id := NULL; global_position := NULL;
      RETURN NEXT;
    END IF;
  END LOOP;

  RETURN QUERY
    WITH written AS (
      INSERT INTO ledger_events AS e
        (stream_id, stream_revision, first_event_id, event_type, schema_version, data, metadata, category, project)
      SELECT p_streams[x.a], v_first[x.a] + x.n - v_start[x.a],
             CASE WHEN x.n = v_start[x.a] THEN p_first_event_ids[x.a] END, x.type, x.version, x.data,
             x.metadata, p_categories[x.a], x.project
      FROM unnest(p_appends, p_types, p_versions, p_data, p_metadata, p_projects) WITH ORDINALITY
           AS x(a, type, version, data, metadata, project, n)
      WHERE v_first[x.a] IS NOT NULL
      RETURNING e.stream_id, e.stream_revision, e.global_position
    )
    -- Each append's answer is its last event.
    SELECT k.ord::integer, w.stream_revision, pg_current_xact_id()::text, w.global_position
    FROM written w JOIN unnest(p_streams, v_last) WITH ORDINALITY AS k(stream, last, ord)
      ON w.stream_id = k.stream AND w.stream_revision = k.last;
END $$;
`;
