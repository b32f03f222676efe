-- Whether the table's status trigger is this release's (1) or an earlier one's (0): this
-- release's leaves the rows the store finishes to the store, which moves their keys'
-- heads in one statement per batch (see prepare.sql). An earlier one still keeps the
-- heads right, running for every row that finishes.
SELECT count(*) = 1 FROM {schema_prefix}sqlite_schema
WHERE type = 'trigger' AND name = '{name}_head_after_status'
  AND sql LIKE '%OLD.is_head = 1 AND NEW.is_head = 1%'
