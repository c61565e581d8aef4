package testdb

import (
	"encoding/json"
	"testing"
)

// Unsealed rewrites archive lines as an outboxctl from before archives recorded a shard and
// a checksum per operation wrote them: the same lines without "shard", "checksum" and
// "sha256", in format version 2 (a version 3 line without them is an edit). edit, when
// given, changes line i's fields first.
func Unsealed(t testing.TB, lines []string, edit func(i int, line map[string]any)) []string {
	t.Helper()
	return Stripped(t, lines, func(i int, m map[string]any) {
		m["v"] = 2
		if edit != nil {
			edit(i, m)
		}
	})
}

// Stripped removes "shard", "checksum" and "sha256" from archive lines and keeps their format
// version: the downgrade that made a sealed operation look like an unsealed one. edit, when
// given, changes line i's fields after.
func Stripped(t testing.TB, lines []string, edit func(i int, line map[string]any)) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "shard")
		delete(m, "checksum")
		delete(m, "sha256")
		if edit != nil {
			edit(i, m)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b)+"\n")
	}
	return out
}
