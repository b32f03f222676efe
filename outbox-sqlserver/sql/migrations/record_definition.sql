-- Name and checksum, bound in that order.
MERGE {schema_prefix}[{name}_definitions] AS d
USING (VALUES (@P1, @P2)) AS s (name, checksum)
ON d.name = s.name
WHEN MATCHED THEN
    UPDATE SET checksum = s.checksum, applied_at = SYSUTCDATETIME()
WHEN NOT MATCHED THEN
    INSERT (name, checksum) VALUES (s.name, s.checksum);
