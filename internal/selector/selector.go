// Package selector is the selector flags' service: one set shared by shards and every bulk
// repair (reschedule, compact, skip, drain), so what `shards` lists with them is what a
// repair given the same flags touches. It checks them, says them back as a command line
// gives them, reads --shards-from and resolves them into a query.ShardSelector; cmd
// registers the flags and hands it the registry's names.
package selector

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/outboxctl/outboxctl/internal/interrupt"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/refused"
)

// Flags are the selector flags as given (cmd's selectorOptions, field for field, converts to
// it). A bulk run's journal records them (JSON, by field name): a resume compares them.
type Flags struct {
	Stuck, AtCap                  bool
	Scope, Category, HeadCategory string
	AddedAfter, AddedBefore       string
	MinDepth                      int
	ShardsFrom                    string
	Limit                         int
	NotKillswitched               bool
}

// HasCriterion reports whether a criterion flag is given (--limit alone is none).
func (f Flags) HasCriterion() bool {
	return f.Stuck || f.AtCap || f.Scope != "" || f.Category != "" || f.HeadCategory != "" ||
		f.AddedAfter != "" || f.AddedBefore != "" || f.MinDepth > 0 || f.ShardsFrom != ""
}

// Validate checks the selector flags that need no registry or database. requireCriterion
// refuses a selector that would select every shard (a repair's).
func (f Flags) Validate(command string, requireCriterion bool) error {
	if f.MinDepth < 0 {
		return refused.Errorf(command+" --min-depth 100", "`--min-depth` must not be negative")
	}
	if f.Limit < 0 {
		return refused.Errorf(command+" --limit 100", "`--limit` must not be negative")
	}
	for _, t := range []struct{ name, value string }{{"added-after", f.AddedAfter}, {"added-before", f.AddedBefore}} {
		if t.value == "" {
			continue
		}
		if _, err := query.ParseTimeOrAgo(t.value, time.Now()); err != nil {
			return refused.Errorf(command+" --"+t.name+" 2h", "invalid `--%s` %q: %v", t.name, t.value, err)
		}
	}
	if requireCriterion && !f.HasCriterion() {
		return refused.Errorf(command+" --stuck", "select the shards to work on: give at least one of --stuck, --at-cap, --scope, --category, --head-category, --added-after, --added-before, --min-depth or --shards-from (never every shard by accident; preview them with `outboxctl shards` and the same flags)")
	}
	return nil
}

// Words are the selector flags as a command line gives them.
func (f Flags) Words() []string {
	var w []string
	flag := func(on bool, name string, value ...string) {
		if on {
			w = append(append(w, "--"+name), value...)
		}
	}
	flag(f.Stuck, "stuck")
	flag(f.AtCap, "at-cap")
	flag(f.Scope != "", "scope", f.Scope)
	flag(f.Category != "", "category", f.Category)
	flag(f.HeadCategory != "", "head-category", f.HeadCategory)
	flag(f.AddedAfter != "", "added-after", f.AddedAfter)
	flag(f.AddedBefore != "", "added-before", f.AddedBefore)
	flag(f.MinDepth > 0, "min-depth", strconv.Itoa(f.MinDepth))
	flag(f.ShardsFrom != "", "shards-from", f.ShardsFrom)
	flag(f.Limit > 0, "limit", strconv.Itoa(f.Limit))
	flag(f.NotKillswitched, "not-killswitched")
	if len(w) == 0 {
		return []string{"(no selector flag)"}
	}
	return w
}

// Names resolves what the flags name, as the command line's names are resolved (the
// registry, through cmd): a scope, a category, and the shard id of a --shards-from line.
type Names struct {
	Scope    func(string) (*query.Enum, error)
	Category func(string) (*query.Enum, error)
	ID       func(string) (int64, error)
}

// Input is where --shards-from - reads (the command's stdin) and what stops the read (the
// command's context: its first signal), and Help the Try: line of a list refused (the
// command's --help).
type Input struct {
	Ctx   context.Context
	Stdin io.Reader
	Help  string
}

// Resolve resolves the flags' names, their times against now, and reads --shards-from.
func (f Flags) Resolve(command string, now time.Time, n Names, in Input) (query.ShardSelector, error) {
	s := query.ShardSelector{Stuck: f.Stuck, AtCap: f.AtCap, MinDepth: f.MinDepth, Limit: f.Limit, NotKillswitched: f.NotKillswitched}
	var err error
	if f.Scope != "" {
		if s.Scope, err = n.Scope(f.Scope); err != nil {
			return s, err
		}
	}
	for _, c := range []struct {
		flag string
		dst  **query.Enum
	}{{f.Category, &s.Category}, {f.HeadCategory, &s.HeadCategory}} {
		if c.flag == "" {
			continue
		}
		if *c.dst, err = n.Category(c.flag); err != nil {
			return s, err
		}
	}
	for _, t := range []struct {
		flag string
		dst  **time.Time
	}{{f.AddedAfter, &s.AddedAfter}, {f.AddedBefore, &s.AddedBefore}} {
		if t.flag == "" {
			continue
		}
		at, err := query.ParseTimeOrAgo(t.flag, now)
		if err != nil {
			return s, refused.Errorf(command+" --added-after 2h", "invalid time %q: %v", t.flag, err)
		}
		*t.dst = &at
	}
	if f.ShardsFrom != "" {
		if s.Listed, err = ReadList(f.ShardsFrom, n, in); err != nil {
			return s, err
		}
	}
	return s, nil
}

// ReadList reads --shards-from (a path, or - for stdin) and parses it
// (query.ParseShardList: SCOPE ID lines, the JSON of shards -o json, a bulk summary's).
func ReadList(path string, n Names, in Input) ([]query.ShardRef, error) {
	r := in.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, refused.Errorf(in.Help, "cannot read `--shards-from`: %v", err)
		}
		defer f.Close()
		r = f
	}
	// Stdin may never end (a terminal, a pipe no one writes to): the first Ctrl-C stops it.
	data, err := interrupt.ReadAll(in.Ctx, r, query.MaxShardList+1)
	if errors.Is(err, context.Canceled) {
		return nil, err // the signal's: exit 130, "interrupted"
	}
	if err != nil {
		return nil, &Failure{Msg: "reading --shards-from " + path + ": " + err.Error()}
	}
	if len(data) > query.MaxShardList {
		return nil, refused.Errorf(in.Help, "`--shards-from` %s is over %d MiB: split it", path, query.MaxShardList>>20)
	}
	out, err := query.ParseShardList(data, path, func(word string) (int, error) {
		scope, err := n.Scope(word)
		if err != nil {
			return 0, err
		}
		return scope.Value, nil
	}, n.ID)
	if le := (*query.ShardListError)(nil); errors.As(err, &le) {
		return nil, refused.Errorf(in.Help, "%s", le.Msg)
	}
	return out, err
}

// Failure is a read of --shards-from that failed, said in its own words: a runtime failure
// (exit 1) never reworded as an interrupt (cmd/exit.go's account).
type Failure struct{ Msg string }

func (e *Failure) Error() string { return e.Msg }

// Account marks it as its own account of what happened (cmd/exit.go).
func (e *Failure) Account() bool { return true }
