-- Portable claim, step 1 of 1 + 2N: the ordered ids of claimable pending rows, with the
-- one instant (@P1, else the server's clock) every re-check and write of the claim uses.
-- @P1 now, @P2 topic (NULL: every topic), @P3 limit. A plain read: no lock hints.
SELECT TOP (@P3) CAST(COALESCE(@P1, SYSUTCDATETIME()) AS datetime2(6)) AS clock_now, id
FROM {table}
WHERE status = 0
  AND (not_before IS NULL OR not_before <= COALESCE(@P1, SYSUTCDATETIME()))
  AND (claim_expires_at IS NULL OR claim_expires_at <= COALESCE(@P1, SYSUTCDATETIME()))
  AND (@P2 IS NULL OR (topic = @P2 AND DATALENGTH(topic) = DATALENGTH(@P2)))
ORDER BY created_at, id;
