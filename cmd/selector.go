package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/selector"
)

// selectorOptions are the selector flags, one set shared by shards and every bulk repair
// (reschedule, compact, skip, drain): what `shards` lists with them is what a repair given
// the same flags touches. --cell is the global flag (the target's cell). It is
// selector.Flags field for field (internal/selector checks, says and resolves them), a type
// of cmd's so its commands' options embed it.
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
func (o selectorOptions) hasCriterion() bool { return selector.Flags(o).HasCriterion() }

// validate checks the selector flags that need no registry or database (selector.Flags.Validate).
// requireCriterion refuses a selector that would select every shard (a repair's).
func (o selectorOptions) validate(command string, requireCriterion bool) error {
	return tried(selector.Flags(o).Validate(command, requireCriterion))
}

// shardSelector resolves the selector flags' names (the registry's) and reads --shards-from
// (the command's stdin for -), through selector.Flags.Resolve.
func (a *app) shardSelector(o selectorOptions, command string, now time.Time) (query.ShardSelector, error) {
	names := selector.Names{Scope: a.scopeArg, Category: func(word string) (*query.Enum, error) {
		cat, err := a.categoryArg(word)
		if err != nil {
			return nil, err
		}
		return &query.Enum{Value: cat.Value, Name: cat.Name}, nil
	}, ID: func(word string) (int64, error) { return cmdline.NonNegativeID("shard id", word, command+" --help") }}
	s, err := selector.Flags(o).Resolve(command, now, names, selector.Input{Ctx: a.commandContext(), Stdin: a.io.In, Help: a.helpCommand(command)})
	return s, tried(err)
}
