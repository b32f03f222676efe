-- Portable claim, step 1 of 1 + 2N, for retry-ready rows in retry order.
-- @P1 now, @P2 topic (NULL: every topic), @P3 limit. A plain read: no lock hints.
SELECT TOP (@P3) CAST(COALESCE(@P1, SYSUTCDATETIME()) AS datetime2(6)) AS clock_now, id
FROM {table}
WHERE status IN (2, 4)
  AND (next_retry_at IS NULL OR next_retry_at <= COALESCE(@P1, SYSUTCDATETIME()))
  AND (claim_expires_at IS NULL OR claim_expires_at <= COALESCE(@P1, SYSUTCDATETIME()))
  AND (@P2 IS NULL OR (topic = @P2 AND DATALENGTH(topic) = DATALENGTH(@P2)))
ORDER BY retry_due_at, id;
