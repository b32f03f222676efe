-- The trigger function that keeps each key's head flag (is_head, migration 0004) on the
-- key's oldest unfinished row when rows are written, finish or are deleted. The triggers
-- that call it are created by enable_ordered_claims (sql/ordered/heads.sql).
-- Revision 2: a key left with no unfinished row (its last row delivered, as every row of
-- a key with one row is) ends after the first read instead of running two updates that
-- find nothing.
-- Revision 3: only flags behind the head are cleared. The read of the head and the
-- clearing update take two snapshots; a writer of an older row of the key that commits
-- between them has flagged the key's true oldest row, which this call never saw, and
-- clearing every flag but its own head's would leave that row unflagged and the key
-- stalled behind a flag the claim refuses (not the oldest). Kept, both flags stand until
-- the older row finishes and its trigger clears the other.
-- Revision 4: "behind the head" is spelled as two comparisons, not as one row comparison.
-- On a table never analyzed the planner took the row comparison as a range of the key
-- order index and read the key's whole backlog behind its head on every call (2,400
-- rows a call at 10 keys); spelled out, it is only a filter, and the clearing update
-- reads the few flagged rows through the key head index whatever the statistics.

CREATE OR REPLACE FUNCTION {schema_prefix}"{name}_keep_heads"()
RETURNS trigger
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $heads$
DECLARE
    k text;
    head uuid;
    head_at timestamptz;
BEGIN
    IF TG_OP = 'DELETE' THEN
        k := OLD.partition_key;
    ELSE
        k := NEW.partition_key;
    END IF;
    SELECT h.id, h.created_at INTO head, head_at
    FROM {table} AS h
    WHERE h.partition_key = k AND h.status NOT IN (1, 5)
    ORDER BY h.created_at, h.id
    LIMIT 1
    FOR SHARE;
    IF head IS NULL THEN
        -- The key has no unfinished row left, so no flag that counts.
        RETURN NULL;
    END IF;
    UPDATE {table} AS t SET is_head = false
    WHERE t.partition_key = k AND t.is_head AND t.status NOT IN (1, 5)
      AND (t.created_at > head_at OR (t.created_at = head_at AND t.id > head));
    UPDATE {table} AS t SET is_head = true
    WHERE t.id = head AND NOT t.is_head;
    RETURN NULL;
END
$heads$;
