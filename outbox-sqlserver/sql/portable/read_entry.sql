-- One row by id (@P2), with the instant the caller works at (@P1, else the server's
-- clock) as an extra column, so a write that follows needs no clock query.
SELECT CAST(COALESCE(@P1, SYSUTCDATETIME()) AS datetime2(6)) AS clock_now, t.*
FROM {table} AS t
WHERE t.id = @P2;
