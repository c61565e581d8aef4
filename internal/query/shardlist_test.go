package query_test

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestParseShardList: the three forms --shards-from reads give the same shards; what the
// operator must fix is a *query.ShardListError naming the line; the scope and id checks'
// own errors come back as they are.
func TestParseShardList(t *testing.T) {
	t.Parallel()
	errScope := errors.New("unknown scope")
	scope := func(w string) (int, error) {
		if w == "organization" {
			return 0, nil
		}
		return 0, errScope
	}
	id := func(w string) (int64, error) { return strconv.ParseInt(w, 10, 64) }
	want := []query.ShardRef{{Scope: 0, ID: 42}, {Scope: 0, ID: 7}}
	for name, in := range map[string]string{
		"lines":      "# stuck\norganization 42\n\norganization 7\n",
		"json":       `[{"shard_scope": 0, "shard_identifier": 42}, {"shard_scope": 0, "shard_identifier": 7}]`,
		"jsonl":      "{\"shard_scope\": 0, \"shard_identifier\": 42}\n{\"shard_scope\": 0, \"shard_identifier\": 7}\n",
		"bulk json":  `{"summary": {"shards": 2}, "shards": [{"shard_scope": 0, "shard_identifier": 42}, {"shard_scope": 0, "shard_identifier": 7}]}`,
		"bulk jsonl": "{\"section\": \"summary\", \"reached\": 2}\n{\"section\": \"shards\", \"shard_scope\": 0, \"shard_identifier\": 42}\n{\"section\": \"shards\", \"shard_scope\": 0, \"shard_identifier\": 7}\n",
	} {
		got, err := query.ParseShardList([]byte(in), "f", scope, id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, %v, want %v", name, got, err, want)
		}
	}
	var le *query.ShardListError
	for in, msg := range map[string]string{
		"":               "`--shards-from` f lists no shard: give SCOPE ID lines, the JSON of shards -o json, or a bulk summary's -o json",
		"organization\n": "`--shards-from` f line 1: want `SCOPE ID` (organization 42), got \"organization\"",
		`[{"shard_scope": "0", "shard_identifier": 1}]`: "`--shards-from` f line 1 is not a shard of `shards -o json`: shard_scope is the string \"0\": want an integer",
	} {
		if _, err := query.ParseShardList([]byte(in), "f", scope, id); !errors.As(err, &le) || le.Msg != msg {
			t.Errorf("%q: %v, want a ShardListError %q", in, err, msg)
		}
	}
	if _, err := query.ParseShardList([]byte("user 1\n"), "f", scope, id); err != errScope {
		t.Errorf("a scope the check refuses: %v, want its own error", err)
	}
}
