-- A portable renewal: extends a lease the claim still holds. @P1 expires at,
-- @P2 new stamp, @P3 id, @P4 owner, @P5 token.
-- The count comes back as a row: counts the server reports (DONE tokens) include a
-- trigger's, and are all 0 under a server-wide NOCOUNT.
SET NOCOUNT ON;
UPDATE {table}
SET claim_expires_at = @P1,
    stamp = @P2
WHERE id = @P3 AND claim_owner = @P4 AND DATALENGTH(claim_owner) = DATALENGTH(@P4)
  AND claim_token = @P5
  AND status NOT IN (1, 5);
SELECT @@ROWCOUNT AS n;
