package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
		if _, err := query.ParseTimeOrAgo(f.value, time.Now()); err != nil {
			return usageErrorf(command+" --"+f.name+" 2h", "invalid `--%s` %q: %v", f.name, f.value, err)
		}
	}
	if requireCriterion && !o.hasCriterion() {
		return usageErrorf(command+" --stuck", "select the shards to work on: give at least one of --stuck, --at-cap, --scope, --category, --head-category, --added-after, --added-before, --min-depth or --shards-from (never every shard by accident; preview them with `outboxctl shards` and the same flags)")
	}
	return nil
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
		at, err := query.ParseTimeOrAgo(t.flag, now)
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

// readShardList reads --shards-from (a path, or - for stdin) and parses it
// (query.ParseShardList: SCOPE ID lines, the JSON of shards -o json, a bulk summary's).
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
	data, err := readAllCancellable(a.commandContext(), r, query.MaxShardList+1)
	if errors.Is(err, context.Canceled) {
		return nil, err // the signal's: exit 130, "interrupted"
	}
	if err != nil {
		return nil, failuref("reading --shards-from %s: %v", path, err)
	}
	if len(data) > query.MaxShardList {
		return nil, usageErrorf(a.helpCommand(command), "`--shards-from` %s is over %d MiB: split it", path, query.MaxShardList>>20)
	}
	out, err := query.ParseShardList(data, path, func(word string) (int, error) {
		scope, err := a.scopeArg(word)
		if err != nil {
			return 0, err
		}
		return scope.Value, nil
	}, func(word string) (int64, error) { return nonNegativeID("shard id", word, command+" --help") })
	if le := (*query.ShardListError)(nil); errors.As(err, &le) {
		return nil, usageErrorf(a.helpCommand(command), "%s", le.Msg)
	}
	return out, err
}
