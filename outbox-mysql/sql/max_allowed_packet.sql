-- The longest statement the server accepts, in bytes.
SELECT CAST(@@max_allowed_packet AS UNSIGNED)
