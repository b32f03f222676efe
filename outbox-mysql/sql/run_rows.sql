-- The rows behind each head of a claim in key runs (ClaimRequest::key_run), read without
-- locking: for each head, the next row of its key in key order, then the next, up to the
-- run's length, as long as the next unfinished row of the key is pending (a row of
-- another unfinished status ends the run): a seek in the key index per step, three per
-- head. A step reads the key's pending rows from the head on, so a run of n reads about
-- n * n / 2 index entries. lock_candidates.sql then locks what this found.
--
-- Parameters: a JSON array of the heads' clustered keys, in claim order; the longest run.
-- Returns each row's head position (from 1), step behind its head (from 1) and clustered
-- key.
WITH RECURSIVE heads AS (
    SELECT j.pos, j.seq
    FROM JSON_TABLE(?, '$[*]' COLUMNS (pos FOR ORDINALITY, seq BIGINT PATH '$')) AS j
),
-- ends: where the first row of another unfinished status behind the head lies ('z' when
-- none: after any key).
run (pos, step, seq, partition_key, after, ends) AS (
    SELECT h.pos, 0, t.seq, t.partition_key, CONCAT(t.created_at, t.id),
           LEAST(
               COALESCE((SELECT CONCAT(k.created_at, k.id) FROM {table} AS k FORCE INDEX ({name}_key)
                         WHERE k.partition_key = t.partition_key AND k.status = 2
                           AND CONCAT(k.created_at, k.id) > CONCAT(t.created_at, t.id)
                         ORDER BY k.created_at, k.id LIMIT 1), 'z'),
               COALESCE((SELECT CONCAT(k.created_at, k.id) FROM {table} AS k FORCE INDEX ({name}_key)
                         WHERE k.partition_key = t.partition_key AND k.status = 3
                           AND CONCAT(k.created_at, k.id) > CONCAT(t.created_at, t.id)
                         ORDER BY k.created_at, k.id LIMIT 1), 'z'),
               COALESCE((SELECT CONCAT(k.created_at, k.id) FROM {table} AS k FORCE INDEX ({name}_key)
                         WHERE k.partition_key = t.partition_key AND k.status = 4
                           AND CONCAT(k.created_at, k.id) > CONCAT(t.created_at, t.id)
                         ORDER BY k.created_at, k.id LIMIT 1), 'z'))
    FROM heads AS h
    JOIN {table} AS t ON t.seq = h.seq
    WHERE t.partition_key IS NOT NULL
    UNION ALL
    SELECT r.pos, r.step + 1, n.seq, r.partition_key, CONCAT(n.created_at, n.id), r.ends
    FROM run AS r
    JOIN {table} AS n ON n.seq = (
        SELECT f.seq FROM {table} AS f FORCE INDEX ({name}_key)
        WHERE f.partition_key = r.partition_key AND f.status = 0
          AND CONCAT(f.created_at, f.id) > r.after
        ORDER BY f.created_at, f.id LIMIT 1)
    WHERE r.step + 1 < ?
      AND CONCAT(n.created_at, n.id) < r.ends
)
SELECT pos, step, seq FROM run WHERE step > 0
