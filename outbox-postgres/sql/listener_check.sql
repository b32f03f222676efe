-- The listener's health check, on its own connection: which server process serves it (it
-- must be the one that ran LISTEN: a transaction-mode pooler hands each query to any
-- server connection), whether that server is a standby (a demoted primary, or a name
-- now pointing at a replica), and whether the process still listens on the channel.
SELECT pg_backend_pid() AS pid,
       pg_is_in_recovery() AS in_recovery,
       {channel_literal} = ANY (ARRAY(SELECT pg_listening_channels())) AS listening
