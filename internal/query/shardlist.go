package query

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxShardList caps --shards-from: a list of a million shards is about 30 MB.
const MaxShardList = 64 << 20

// ShardListError is a --shards-from input the operator must fix; Msg says where.
type ShardListError struct{ Msg string }

func (e *ShardListError) Error() string { return e.Msg }

func shardListErrorf(format string, args ...any) error {
	return &ShardListError{Msg: fmt.Sprintf(format, args...)}
}

// ParseShardList reads a --shards-from list (path names it in errors): `SCOPE ID` lines (a
// scope name or integer, resolved by scope; the id checked by id; blank lines and #
// comments skipped), the JSON of `shards -o json` (an array of objects with shard_scope and
// shard_identifier; JSON lines too), or a bulk summary's -o json or -o jsonl (its shards
// section). A malformed input or one listing no shard is a *ShardListError; scope's and
// id's errors come back as they are.
func ParseShardList(data []byte, path string, scope func(string) (int, error), id func(string) (int64, error)) ([]ShardRef, error) {
	trimmed := bytes.TrimSpace(data)
	var out []ShardRef
	var err error
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		out, err = shardListJSON(trimmed, path)
	} else {
		out, err = shardListLines(data, path, scope, id)
	}
	if err == nil && len(out) == 0 { // an empty list selects nothing: a mistake, never a run
		return nil, shardListErrorf("`--shards-from` %s lists no shard: give SCOPE ID lines, the JSON of shards -o json, or a bulk summary's -o json", path)
	}
	return out, err
}

// shardListLines reads `SCOPE ID` lines.
func shardListLines(data []byte, path string, scope func(string) (int, error), id func(string) (int64, error)) ([]ShardRef, error) {
	out := []ShardRef{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxShardList)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, shardListErrorf("`--shards-from` %s line %d: want `SCOPE ID` (organization 42), got %q", path, n, clip(line))
		}
		s, err := scope(fields[0])
		if err != nil {
			return nil, err
		}
		i, err := id(fields[1])
		if err != nil {
			return nil, err
		}
		out = append(out, ShardRef{Scope: s, ID: i})
	}
	return out, sc.Err()
}

// listedShard is one object of `shards -o json`, or a row of a bulk repair's shards section:
// the keys a shard is named by. Section is a JSON line's section (-o jsonl of a document of
// several); Shards a whole bulk summary's shards section.
type listedShard struct {
	Scope   *json.Number     `json:"shard_scope"`
	ID      *json.Number     `json:"shard_identifier"`
	Section *string          `json:"section"`
	Shards  *json.RawMessage `json:"shards"`
	// line is where the object (or the document holding it) starts in the input.
	line int
}

// UnmarshalJSON refuses a shard_scope or shard_identifier written as a string ("42"), which
// json.Number alone takes.
func (l *listedShard) UnmarshalJSON(b []byte) error {
	type plain listedShard
	var raw struct {
		Scope json.RawMessage `json:"shard_scope"`
		ID    json.RawMessage `json:"shard_identifier"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for name, v := range map[string]json.RawMessage{"shard_scope": raw.Scope, "shard_identifier": raw.ID} {
		if len(v) > 0 && v[0] == '"' {
			return fmt.Errorf("%s is the string %s: want an integer", name, v)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode((*plain)(l))
}

// shardListJSON reads the JSON of `shards -o json` (an array) or its JSON lines, or the
// summary a bulk repair or drain SELECTORS prints with -o json or -o jsonl (its shards
// section: the shards it reached, feed them back with jq to choose by outcome).
func shardListJSON(data []byte, path string) ([]ShardRef, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// lineAt is the line of the input where the next value starts.
	lineAt := func() int {
		off := int(dec.InputOffset())
		for off < len(data) && (data[off] == ',' || data[off] == ' ' || data[off] == '\t' || data[off] == '\n' || data[off] == '\r') {
			off++
		}
		return 1 + bytes.Count(data[:off], []byte{'\n'})
	}
	var items []listedShard
	if data[0] == '[' {
		if _, err := dec.Token(); err != nil {
			return nil, shardListErrorf("`--shards-from` %s is not the JSON of `shards -o json`: %v", path, err)
		}
		for dec.More() {
			it := listedShard{line: lineAt()}
			if err := dec.Decode(&it); err != nil {
				return nil, shardListErrorf("`--shards-from` %s line %d is not a shard of `shards -o json`: %v", path, it.line, err)
			}
			items = append(items, it)
		}
	}
	for data[0] != '[' && dec.More() {
		it := listedShard{line: lineAt()}
		if err := dec.Decode(&it); err != nil {
			return nil, shardListErrorf("`--shards-from` %s line %d is not a JSON line of shards: %v", path, it.line, err)
		}
		switch {
		case it.Shards != nil && it.Scope == nil: // a bulk summary's document: its shards section
			var section []listedShard
			if err := json.Unmarshal(*it.Shards, &section); err != nil {
				return nil, shardListErrorf("`--shards-from` %s line %d: its shards section is not a list of shards: %v", path, it.line, err)
			}
			for i := range section {
				section[i].line = it.line
			}
			items = append(items, section...)
		case it.Section != nil && *it.Section != "shards": // a JSON line of another section (the summary card)
		default:
			items = append(items, it)
		}
	}
	out := make([]ShardRef, 0, len(items))
	for i, it := range items {
		if it.Scope == nil || it.ID == nil {
			return nil, shardListErrorf("`--shards-from` %s line %d: shard %d has no shard_scope or shard_identifier (want SCOPE ID lines, the JSON of shards -o json, or a bulk summary's -o json)", path, it.line, i+1)
		}
		scope, err1 := strconv.Atoi(it.Scope.String())
		id, err2 := strconv.ParseInt(it.ID.String(), 10, 64)
		if err1 != nil || err2 != nil || scope < 0 || id < 0 {
			return nil, shardListErrorf("`--shards-from` %s line %d: shard %d: shard_scope and shard_identifier must be non-negative integers", path, it.line, i+1)
		}
		out = append(out, ShardRef{Scope: scope, ID: id})
	}
	return out, nil
}

// clip shortens a quoted input line for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// ParseTimeOrAgo reads RFC 3339, or a non-negative Go duration meaning that long before now
// (the selector's --added-after and --added-before).
func ParseTimeOrAgo(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want RFC 3339 (2026-12-01T10:00:00Z) or a duration ago (2h, 30m)")
	}
	if d < 0 {
		return time.Time{}, fmt.Errorf("a duration ago must not be negative")
	}
	return now.Add(-d), nil
}
