-- Dead-lettered rows, most recently dead-lettered first; @P1 limit.
SELECT TOP (@P1) t.* FROM {table} AS t WHERE t.status = 5 ORDER BY t.updated_at DESC, t.id DESC;
