-- What operators read costs what is live, not the history behind it: rows that wait for
-- something other than a claim of pending rows (2 deferred, 3 failed, 4 retryable
-- failure, 5 dead-lettered), by status in creation order. Counting one of these
-- statuses, and a page of one of them, seeks that status's rows alone. Pending rows have
-- the pending index; delivered rows, the history, are never walked by a live read (their
-- count is the server's row count of the table less the live rows). Expanding: a store
-- of version 3 runs on it unchanged.
CREATE INDEX [{name}_parked_ix] ON {table} (status, created_at, id)
    INCLUDE (next_retry_at, claim_expires_at)
    WHERE status IN (2, 3, 4, 5);
