package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// A bulk run keeps a journal (drain.BulkJournal): its operation id, command, target, selector
// flags and selected shards, then the shards each batch finished. `--resume OPERATION` reads
// it and works on exactly the selected shards the run did not finish, with the run's archive
// and numbering, where running the same command again selects afresh (what is done no longer
// matches --stuck, but does match --scope).

// resumeSelector reads the journal of --resume ID for command and returns the selector of
// what is left (the run's unfinished shards; a skip's category and window as the run resolved
// them). A journal of another command or target, or selector flags other than the run's
// (none is fine), is refused with one line.
func (a *app) resumeSelector(o bulkOptions, command string) (query.ShardSelector, *drain.BulkResume, error) {
	id := o.Resume
	try := command + " --resume " + textsafe.ShellQuote(id)
	r, err := drain.ReadBulkJournal(id)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return query.ShardSelector{}, nil, usageErrorf(command+" --stuck", "no bulk operation %s here: --resume takes the operation id of a bulk run on this machine (its audit line's and summary's \"operation\")", textsafe.Clean(id))
	case err != nil:
		return query.ShardSelector{}, nil, usageErrorf(command+" --stuck", "cannot resume %s: %v", textsafe.Clean(id), err)
	}
	if want := "outboxctl " + r.Command; want != command {
		return query.ShardSelector{}, nil, usageErrorf(want+" --resume "+textsafe.ShellQuote(id), "operation %s is a %s run, not %s: resume it with %s --resume %s", id, r.Command, command, want, id)
	}
	var flags selectorOptions
	if err := json.Unmarshal(r.Flags, &flags); err != nil {
		return query.ShardSelector{}, nil, usageErrorf(try, "cannot resume %s: its journal's flags: %v", id, err)
	}
	if (o.hasCriterion() || o.Limit > 0) && o.selectorOptions != flags {
		return query.ShardSelector{}, nil, usageErrorf(try, "operation %s selected its shards with %s, not %s: give the same selector flags, or none, with --resume",
			id, textsafe.Command(flags.words()...), textsafe.Command(o.selectorOptions.words()...))
	}
	sel := query.ShardSelector{Listed: r.Remaining()}
	if r.Command == "skip" { // its rows: the category and the window as the run resolved them
		flags.ShardsFrom = ""
		full, err := a.shardSelector(flags, command, r.Started)
		if err != nil {
			return sel, nil, err
		}
		sel.Category, sel.AddedAfter, sel.AddedBefore = full.Category, r.AddedAfter, r.AddedBefore
	}
	return sel, r, nil
}

// checkResumeTarget refuses to resume a run on another database or table than its own
// (target: this invocation's, as the journal records it).
func checkResumeTarget(command string, r *drain.BulkResume, target string) error {
	if r == nil || r.Target == target {
		return nil
	}
	return usageErrorf(command+" --resume "+textsafe.ShellQuote(r.Op), "operation %s changed %s, not %s: resume it with the run's --dsn (or --context) and --schema", r.Op, textsafe.Clean(r.Target), target)
}

// words are the selector flags as a command line gives them.
func (o selectorOptions) words() []string {
	var w []string
	flag := func(on bool, name string, value ...string) {
		if on {
			w = append(append(w, "--"+name), value...)
		}
	}
	flag(o.Stuck, "stuck")
	flag(o.AtCap, "at-cap")
	flag(o.Scope != "", "scope", o.Scope)
	flag(o.Category != "", "category", o.Category)
	flag(o.HeadCategory != "", "head-category", o.HeadCategory)
	flag(o.AddedAfter != "", "added-after", o.AddedAfter)
	flag(o.AddedBefore != "", "added-before", o.AddedBefore)
	flag(o.MinDepth > 0, "min-depth", strconv.Itoa(o.MinDepth))
	flag(o.ShardsFrom != "", "shards-from", o.ShardsFrom)
	flag(o.Limit > 0, "limit", strconv.Itoa(o.Limit))
	if len(w) == 0 {
		return []string{"(no selector flag)"}
	}
	return w
}

// bulkJournal starts the run's journal (a fresh run) or opens it to go on (a resume). A
// journal that cannot be written costs the run nothing but --resume: a warning says so.
func (d factory) bulkJournal(o bulkOptions, job bulkRepair, id, archive string, t query.Target, sel query.ShardSelector, refs []query.ShardRef) *drain.BulkJournal {
	var j *drain.BulkJournal
	var err error
	if o.resume != nil {
		j, err = drain.OpenBulkJournal(o.resume.Path)
	} else {
		flags, _ := json.Marshal(o.selectorOptions)
		h := drain.BulkJournalHeader{Op: id, Command: job.command, Target: d.where() + ", " + t.Describe(), Flags: flags,
			AddedAfter: sel.AddedAfter, AddedBefore: sel.AddedBefore, Archive: archive, Started: d.now().UTC()}
		for _, r := range refs {
			h.Shards = append(h.Shards, [2]int64{int64(r.Scope), r.ID})
		}
		j, err = drain.CreateBulkJournal(h)
	}
	if err != nil {
		d.printer.Warnf("cannot keep the run's journal (%v): --resume %s will not know it; running the same command again still continues", err, id)
		return nil
	}
	return j
}

// resumeLine is a resumed plan's first line.
func resumeLine(r *drain.BulkResume, left int) string {
	return fmt.Sprintf("resuming operation %s (started %s): %d of its %d selected shard(s) not finished", r.Op, r.Started.Format(time.RFC3339), left, len(r.Shards))
}
