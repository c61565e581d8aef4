package fanout

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/render"
)

// orders are the reads that run against several contexts at once, each with the sort keys
// of its sections as its single-target SQL orders them (MergeDocs).
var orders = map[string]map[string][]SortKey{ //nolint:gochecknoglobals // constant table
	"outboxctl shards":           {"shards": {Desc("depth"), Asc("shard_scope"), Asc("shard_identifier")}},
	"outboxctl depth":            {"depth": {Asc("category")}},
	"outboxctl inspect category": {"category": {Desc("pending"), Asc("shard_scope")}},
	"outboxctl inspect object":   {"outboxes": {Desc("id")}},
	"outboxctl inspect message":  {},
	"outboxctl killswitch list":  {"disabled": {Desc("depth")}, "backfill_gates": {Asc("key")}},
	"outboxctl backfill status":  {"backfill": {Asc("table")}},
	"outboxctl doctor":           {"findings": {Desc("severity")}},
}

// ranks order a column's text by its place in the list rather than alphabetically.
var ranks = map[string][]string{"severity": {"ok", "warn", "crit"}} //nolint:gochecknoglobals // constant table

// Fans reports whether the command at path (its command path) is a read that runs against
// several contexts at once.
func Fans(path string) bool {
	_, ok := orders[path]
	return ok
}

// Verdicts orders the verdicts a read can end with, best first.
var Verdicts = []exitcode.Meaning{exitcode.OK, exitcode.Pending, exitcode.Warning, exitcode.Threshold, exitcode.Critical} //nolint:gochecknoglobals // constant list

// Read is one context's document, and its verdict (threshold, warning, critical or
// pending) if any.
type Read = Verdicted[exitcode.Meaning]

// ReadOf is one context's run as the merge takes it: its document, with the verdict it
// ended with; any other error is the context's failure.
func ReadOf(ctx context.Context, doc render.Doc, err error) (Read, error) {
	switch m := exitcode.Of(ctx, err); {
	case m == exitcode.OK:
		return Read{Doc: doc}, nil
	case slices.Contains(Verdicts, m):
		return Read{Doc: doc, Means: m, Verdict: err}, nil
	}
	return Read{}, err
}

// Gone is a context of a fan-out that did not answer, and why.
type Gone struct {
	Name string
	Err  error
}

// Settle merges the documents of the contexts that answered the read at path, lists the
// contexts that did not, and picks the exit: 6 when some failed (it outranks any verdict:
// the missing context could hide a worse one), 1 when all did, else the worst verdict.
func Settle(path string, results []Result[Read]) (render.Doc, []Gone, error) {
	m := MergeVerdicts(results, Order{Keys: orders[path], Ranks: ranks}, Verdicts)
	var gone []Gone
	for _, f := range m.Failed {
		gone = append(gone, Gone{Name: f.Target, Err: f.Err})
	}
	switch {
	case m.Outcome == AllFailed:
		return m.Doc, gone, &exitcode.Outcome{Means: exitcode.Runtime}
	case m.Outcome == Partial:
		return m.Doc, gone, &exitcode.Outcome{Means: exitcode.Partial}
	case m.Verdict != nil:
		return m.Doc, gone, &exitcode.Outcome{Means: m.Worst, Msg: "context " + m.VerdictOf + ": " + m.Verdict.Error()}
	}
	return m.Doc, gone, nil
}

// PrintGone prints one "context gone" line per context that did not answer, after the
// merged rows.
func PrintGone(w io.Writer, gone []Gone) {
	for _, g := range gone {
		fmt.Fprintf(w, "Error: context gone: %s: %s\n", render.Escape(g.Name), exitcode.OneLine(db.RedactDSN(g.Err.Error())))
	}
}
