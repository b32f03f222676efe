-- The request's time, or else the database's clock.
SELECT COALESCE(?, {now}) AS clock_now
