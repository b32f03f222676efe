-- One entry by id (@P1).
SELECT t.* FROM {table} AS t WHERE t.id = @P1;
