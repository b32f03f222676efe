-- Name, revision and checksum, bound in that order.
MERGE {schema_prefix}[{name}_definitions] AS d
USING (VALUES (@P1, @P2, @P3)) AS s (name, revision, checksum)
ON d.name = s.name
WHEN MATCHED THEN
    UPDATE SET revision = s.revision, checksum = s.checksum, applied_at = SYSUTCDATETIME()
WHEN NOT MATCHED THEN
    INSERT (name, revision, checksum) VALUES (s.name, s.revision, s.checksum);
