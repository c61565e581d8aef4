package query

// BackfillRedisKey is a table's backfill cursor key in the Redis era (Sep 2023 – Sep 2026):
// outbox_backfill.<db_table>, holding the JSON [low, version]. prefix is prepended for a
// Redis shared with other data (and per-test isolation).
func BackfillRedisKey(prefix, table string) string { return prefix + "outbox_backfill." + table }

// RedisGetComment is how --print-sql shows a Redis read: as a redis-cli command in a SQL
// comment, so the printed script stays executable.
func RedisGetComment(key string) string { return "-- redis-cli GET " + key }
