LISTEN {channel};
SELECT pg_backend_pid();
