-- The listener's probe, sent from a connection of its own: a notification the listening
-- connection must hear, with a payload no other listener takes for a wake-up.
SELECT pg_notify({channel_literal}, {probe_literal})
