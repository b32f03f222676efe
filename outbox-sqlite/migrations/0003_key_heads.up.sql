-- Per-key order (claims with `ordered`): the head flag each keyed row carries once its
-- table is prepared for ordered claims (`enable_ordered_claims`, sql/ordered/prepare.sql,
-- which adds the indexes and triggers that keep it). The column alone costs nothing.
ALTER TABLE {table} ADD COLUMN is_head INTEGER NOT NULL DEFAULT 0 CHECK (is_head IN (0, 1));
