-- outboxctl: doctor-lock-timeout
-- A short statement timeout for the lock query that follows (SET LOCAL).
SELECT set_config('statement_timeout', '1000', true) AS statement_timeout  -- milliseconds, for the rest of this transaction
;
