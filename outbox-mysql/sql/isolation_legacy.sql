-- The isolation level of the session's transactions (MariaDB before 11.1).
SELECT @@SESSION.tx_isolation
