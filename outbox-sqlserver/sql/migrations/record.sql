-- Version, name, oldest compatible version and checksum, bound in that order: a new
-- record, or the completion of one a release before checksums left.
MERGE {migrations} AS m
USING (VALUES (@P1, @P2, @P3, @P4)) AS s (version, name, oldest_compatible, checksum)
ON m.version = s.version
WHEN MATCHED THEN
    UPDATE SET oldest_compatible = s.oldest_compatible, checksum = s.checksum
WHEN NOT MATCHED THEN
    INSERT (version, name, oldest_compatible, checksum)
    VALUES (s.version, s.name, s.oldest_compatible, s.checksum);
