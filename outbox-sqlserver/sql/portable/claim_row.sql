-- Portable claim, step 2 of 2 per row: lease the row only if it is still exactly the
-- version the re-read judged eligible. @P1 owner, @P2 token, @P3 claimed at,
-- @P4 expires at, @P5 claim attempt count, @P6 new stamp, @P7 id, @P8 the stamp read.
-- The count comes back as a row: counts the server reports (DONE tokens) include a
-- trigger's, and are all 0 under a server-wide NOCOUNT.
SET NOCOUNT ON;
UPDATE {table}
SET claim_owner = @P1,
    claim_token = @P2,
    claimed_at = @P3,
    claim_expires_at = @P4,
    claim_attempt_count = @P5,
    stamp = @P6
WHERE id = @P7 AND stamp = @P8;
SELECT @@ROWCOUNT AS n;
