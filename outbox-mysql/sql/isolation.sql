-- The isolation level of the session's transactions (MySQL, and MariaDB from 11.1).
SELECT @@SESSION.transaction_isolation
