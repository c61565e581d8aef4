package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
)

// selectorOptions are the selector flags, one set shared by shards and every bulk repair
// (reschedule, compact, skip, drain): what `shards` lists with them is what a repair given
// the same flags touches. --cell is the global flag (the target's cell).
type selectorOptions struct {
	Stuck, AtCap                  bool
	Scope, Category, HeadCategory string
	AddedAfter, AddedBefore       string
	MinDepth                      int
	ShardsFrom                    string
	Limit                         int
	NotKillswitched               bool
}

// selectorUse is what differs between the commands taking the selector flags: the default
// --limit (shards lists 20; a repair has no cap by default) and what --category means.
type selectorUse struct {
	limit        int
	categoryHelp string
}

// addSelectorFlags registers the selector flags on c.
func (a *app) addSelectorFlags(c *cobra.Command, o *selectorOptions, use selectorUse) {
	fl := c.Flags()
	fl.BoolVar(&o.Stuck, "stuck", false, "only shards in backoff (every row scheduled in the future)")
	fl.BoolVar(&o.AtCap, "at-cap", false, fmt.Sprintf("only shards whose backoff reached Sentry's %d s cap (their head row's last delay)", query.BackoffCap))
	fl.StringVar(&o.Scope, "scope", "", "only this scope (name or integer)")
	fl.StringVar(&o.Category, "category", "", use.categoryHelp)
	fl.StringVar(&o.HeadCategory, "head-category", "", "only shards whose head row (the lowest id, which Sentry delivers first) is of this category")
	fl.StringVar(&o.AddedAfter, "added-after", "", "only shards holding a row added at or after this time: RFC 3339 (2026-12-01T10:00:00Z) or a duration ago (2h)")
	fl.StringVar(&o.AddedBefore, "added-before", "", "only shards holding a row added before this time: RFC 3339 or a duration ago (30m)")
	fl.IntVar(&o.MinDepth, "min-depth", 0, "only shards with at least this many rows")
	fl.StringVar(&o.ShardsFrom, "shards-from", "", "only the shards listed in `FILE`: SCOPE ID lines, the JSON of shards -o json, or a bulk repair's -o json summary (its shards) (- for stdin)")
	fl.BoolVar(&o.NotKillswitched, "not-killswitched", false, "leave out the shards a kill switch disables (the options Sentry reads for the table, read when the command runs)")
	limitHelp := "at most this many shards"
	if use.limit == 0 {
		limitHelp = "at most this many shards (default: every selected shard)"
	}
	fl.IntVar(&o.Limit, "limit", use.limit, limitHelp)
	_ = c.RegisterFlagCompletionFunc("scope", a.completeNames(enums.KindScope))
	_ = c.RegisterFlagCompletionFunc("category", a.completeNames(enums.KindCategory))
	_ = c.RegisterFlagCompletionFunc("head-category", a.completeNames(enums.KindCategory))
}

// hasCriterion reports whether a criterion flag is given (--limit alone is none).
func (o selectorOptions) hasCriterion() bool {
	return o.Stuck || o.AtCap || o.Scope != "" || o.Category != "" || o.HeadCategory != "" ||
		o.AddedAfter != "" || o.AddedBefore != "" || o.MinDepth > 0 || o.ShardsFrom != ""
}

// validate checks the selector flags that need no registry or database. requireCriterion
// refuses a selector that would select every shard (a repair's).
func (o selectorOptions) validate(command string, requireCriterion bool) error {
	if o.MinDepth < 0 {
		return usageErrorf(command+" --min-depth 100", "`--min-depth` must not be negative")
	}
	if o.Limit < 0 {
		return usageErrorf(command+" --limit 100", "`--limit` must not be negative")
	}
	for _, f := range []struct{ name, value string }{{"added-after", o.AddedAfter}, {"added-before", o.AddedBefore}} {
		if f.value == "" {
			continue
		}
		if _, err := parseTimeOrAgo(f.value, time.Now()); err != nil {
			return usageErrorf(command+" --"+f.name+" 2h", "invalid `--%s` %q: %v", f.name, f.value, err)
		}
	}
	if requireCriterion && !o.hasCriterion() {
		return usageErrorf(command+" --stuck", "select the shards to work on: give at least one of --stuck, --at-cap, --scope, --category, --head-category, --added-after, --added-before, --min-depth or --shards-from (never every shard by accident; preview them with `outboxctl shards` and the same flags)")
	}
	return nil
}

// parseTimeOrAgo reads RFC 3339, or a non-negative Go duration meaning that long before now.
func parseTimeOrAgo(s string, now time.Time) (time.Time, error) {
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

// shardSelector resolves the selector flags' names and reads --shards-from.
func (a *app) shardSelector(o selectorOptions, command string, now time.Time) (query.ShardSelector, error) {
	s := query.ShardSelector{Stuck: o.Stuck, AtCap: o.AtCap, MinDepth: o.MinDepth, Limit: o.Limit, NotKillswitched: o.NotKillswitched}
	var err error
	if o.Scope != "" {
		if s.Scope, err = a.scopeArg(o.Scope); err != nil {
			return s, err
		}
	}
	for _, c := range []struct {
		flag string
		dst  **query.Enum
	}{{o.Category, &s.Category}, {o.HeadCategory, &s.HeadCategory}} {
		if c.flag == "" {
			continue
		}
		cat, err := a.categoryArg(c.flag)
		if err != nil {
			return s, err
		}
		*c.dst = &query.Enum{Value: cat.Value, Name: cat.Name}
	}
	for _, t := range []struct {
		flag string
		dst  **time.Time
	}{{o.AddedAfter, &s.AddedAfter}, {o.AddedBefore, &s.AddedBefore}} {
		if t.flag == "" {
			continue
		}
		at, err := parseTimeOrAgo(t.flag, now)
		if err != nil {
			return s, usageErrorf(command+" --added-after 2h", "invalid time %q: %v", t.flag, err)
		}
		*t.dst = &at
	}
	if o.ShardsFrom != "" {
		if s.Listed, err = a.readShardList(o.ShardsFrom, command); err != nil {
			return s, err
		}
	}
	return s, nil
}

// maxShardList caps --shards-from: a list of a million shards is about 30 MB.
const maxShardList = 64 << 20

// readShardList reads --shards-from: `SCOPE ID` lines (a scope name or integer; blank lines
// and # comments skipped), the JSON of `shards -o json` (an array of objects with
// shard_scope and shard_identifier; JSON lines too), or a bulk summary's -o json or -o jsonl
// (its shards section).
func (a *app) readShardList(path, command string) ([]query.ShardRef, error) {
	var r io.Reader = a.io.In
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usageErrorf(a.helpCommand(command), "cannot read `--shards-from`: %v", err)
		}
		defer f.Close()
		r = f
	}
	// Stdin may never end (a terminal, a pipe no one writes to): the first Ctrl-C stops it.
	data, err := readAllCancellable(a.commandContext(), r, maxShardList+1)
	if errors.Is(err, context.Canceled) {
		return nil, err // the signal's: exit 130, "interrupted"
	}
	if err != nil {
		return nil, failuref("reading --shards-from %s: %v", path, err)
	}
	if len(data) > maxShardList {
		return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s is over %d MiB: split it", path, maxShardList>>20)
	}
	trimmed := bytes.TrimSpace(data)
	var out []query.ShardRef
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		out, err = a.shardListJSON(trimmed, path, command)
	} else {
		out, err = a.shardListLines(data, path, command)
	}
	if err == nil && len(out) == 0 { // an empty list selects nothing: a mistake, never a run
		return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s lists no shard: give SCOPE ID lines, the JSON of shards -o json, or a bulk summary's -o json", path)
	}
	return out, err
}

// shardListLines reads `SCOPE ID` lines.
func (a *app) shardListLines(data []byte, path, command string) ([]query.ShardRef, error) {
	out := []query.ShardRef{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxShardList)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s line %d: want `SCOPE ID` (organization 42), got %q", path, n, clip(line))
		}
		scope, err := a.scopeArg(fields[0])
		if err != nil {
			return nil, err
		}
		id, err := nonNegativeID("shard id", fields[1], command+" --help")
		if err != nil {
			return nil, err
		}
		out = append(out, query.ShardRef{Scope: scope.Value, ID: id})
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
func (a *app) shardListJSON(data []byte, path, command string) ([]query.ShardRef, error) {
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
			return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s is not the JSON of `shards -o json`: %v", path, err)
		}
		for dec.More() {
			it := listedShard{line: lineAt()}
			if err := dec.Decode(&it); err != nil {
				return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s line %d is not a shard of `shards -o json`: %v", path, it.line, err)
			}
			items = append(items, it)
		}
	}
	for data[0] != '[' && dec.More() {
		it := listedShard{line: lineAt()}
		if err := dec.Decode(&it); err != nil {
			return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s line %d is not a JSON line of shards: %v", path, it.line, err)
		}
		switch {
		case it.Shards != nil && it.Scope == nil: // a bulk summary's document: its shards section
			var section []listedShard
			if err := json.Unmarshal(*it.Shards, &section); err != nil {
				return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s line %d: its shards section is not a list of shards: %v", path, it.line, err)
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
	out := make([]query.ShardRef, 0, len(items))
	for i, it := range items {
		if it.Scope == nil || it.ID == nil {
			return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s line %d: shard %d has no shard_scope or shard_identifier (want SCOPE ID lines, the JSON of shards -o json, or a bulk summary's -o json)", path, it.line, i+1)
		}
		scope, err1 := strconv.Atoi(it.Scope.String())
		id, err2 := strconv.ParseInt(it.ID.String(), 10, 64)
		if err1 != nil || err2 != nil || scope < 0 || id < 0 {
			return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s line %d: shard %d: shard_scope and shard_identifier must be non-negative integers", path, it.line, i+1)
		}
		out = append(out, query.ShardRef{Scope: scope, ID: id})
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
