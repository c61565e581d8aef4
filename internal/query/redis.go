package query

import (
	"fmt"
	"strings"
)

// BackfillRedisKey is a table's backfill cursor key in the Redis era (Sep 2023 – Sep 2026):
// outbox_backfill.<db_table>, holding the JSON [low, version]. prefix is prepended for a
// Redis shared with other data (and per-test isolation).
func BackfillRedisKey(prefix, table string) string { return prefix + "outbox_backfill." + table }

// RedisGetComment is how --print-sql shows a Redis read: as a redis-cli command in a SQL
// comment, so the printed script stays executable. The key is written as one redis-cli
// argument that can never end the comment: plain when it is printable ASCII, else in
// redis-cli's double quotes with every other byte as \xHH.
func RedisGetComment(key string) string { return "-- redis-cli GET " + RedisArg(key) }

// RedisArg renders s as one redis-cli argument on one line.
func RedisArg(s string) string {
	plain := s != ""
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			plain = false
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
