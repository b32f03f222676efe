-- Every connection of a pool the store opens: claims and completions run READ COMMITTED
-- (locking reads take no gap locks, so claims never block an enqueue, and each statement
-- sees the latest committed rows). Times need no session setting: DATETIME columns are
-- written and read as given (UTC), and the server's clock is read as UTC_TIMESTAMP.
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED
