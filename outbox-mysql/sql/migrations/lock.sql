-- One named lock per outbox table, held by the migrating connection until it releases
-- it (release_lock.sql) or closes, so two hosts migrating at once take turns. DDL commits
-- on its own on these engines: the lock, not a transaction, is what serializes runs.
-- ? the lock's name, ? how many seconds to wait. 1 when taken.
SELECT GET_LOCK(?, ?)
