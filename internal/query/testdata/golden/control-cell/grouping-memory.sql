-- outboxctl: grouping-memory
-- work_mem for the grouping of every row that follows (SET LOCAL), never below the server's.
SELECT set_config('work_mem', (greatest(pg_size_bytes(current_setting('work_mem')), 12000000::bigint) / 1024)::text || 'kB', true) AS work_mem  -- bytes: 6 a row of the planner's estimate, 4 MiB to 256 MiB
;

-- outboxctl: grouping-memory
-- work_mem for the grouping of every row that follows (SET LOCAL), never below the server's.
SELECT set_config('work_mem', (greatest(pg_size_bytes(current_setting('work_mem')), 268435456::bigint) / 1024)::text || 'kB', true) AS work_mem  -- bytes: 6 a row of the planner's estimate, 4 MiB to 256 MiB
;
