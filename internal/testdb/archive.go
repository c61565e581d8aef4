package testdb

import (
	"encoding/json"
	"testing"
)

// Unsealed rewrites archive lines as an outboxctl from before archives recorded a shard and
// a checksum per operation wrote them: the same lines without "shard", "checksum" and
// "sha256". edit, when given, changes line i's fields first.
func Unsealed(t testing.TB, lines []string, edit func(i int, line map[string]any)) []string {
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
