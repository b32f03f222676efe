-- Back to version 6: every store learns where its claims start on its own.
DROP TABLE IF EXISTS {schema_prefix}"{name}_claim_starts";
