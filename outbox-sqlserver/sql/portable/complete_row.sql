-- A portable completion's write: only while the row still holds this claim (owner,
-- token) at the version the check read (stamp), and never over a terminal row.
-- @P1 status, @P2 next_retry_at, @P3 attempt_count, @P4 last_error,
-- @P5 dead_letter_reason, @P6 delivered_at, @P7 provider_message_id, @P8 now,
-- @P9 new stamp, @P10 id, @P11 owner, @P12 token, @P13 the stamp read.
-- The count comes back as a row: counts the server reports (DONE tokens) include a
-- trigger's, and are all 0 under a server-wide NOCOUNT.
SET NOCOUNT ON;
UPDATE {table}
SET status = @P1,
    next_retry_at = @P2,
    retry_due_at = COALESCE(@P2, @P8),
    attempt_count = @P3,
    last_error = @P4,
    dead_letter_reason = @P5,
    delivered_at = @P6,
    provider_message_id = @P7,
    updated_at = @P8,
    stamp = @P9,
    claim_owner = NULL,
    claim_token = NULL,
    claimed_at = NULL,
    claim_expires_at = NULL
WHERE id = @P10 AND claim_owner = @P11 AND DATALENGTH(claim_owner) = DATALENGTH(@P11)
  AND claim_token = @P12 AND stamp = @P13
  AND status NOT IN (1, 5);
SELECT @@ROWCOUNT AS n;
