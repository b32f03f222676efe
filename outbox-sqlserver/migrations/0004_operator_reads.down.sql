-- Back to version 3: no index of parked rows.
DROP INDEX IF EXISTS [{name}_parked_ix] ON {table};
