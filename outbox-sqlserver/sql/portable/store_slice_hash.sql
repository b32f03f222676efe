-- A row's slice hash (outbox_core::slice_hash), stored where it has none: a row written
-- before the column existed, or by a host's own SQL. @P1 the hash, @P2 the id.
-- The count comes back as a row, as in the other portable writes.
SET NOCOUNT ON;
UPDATE {table}
SET slice_hash = @P1
WHERE id = @P2 AND slice_hash IS NULL;
SELECT @@ROWCOUNT AS n;
