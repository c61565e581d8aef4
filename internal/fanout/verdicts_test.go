package fanout_test

import (
	"errors"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestMergeVerdicts: every context answered, the worst verdict by severity comes back with
// its context (the first one that has it); one failed, the outcome is partial, no verdict
// is picked (the caller's partial outranks it) and the failure is listed; all failed, no
// document.
func TestMergeVerdicts(t *testing.T) {
	t.Parallel()
	severity := []string{"ok", "warn", "crit"}
	doc := func(v int64) render.Doc {
		return render.Doc{{Name: "depth", Table: &render.Table{Columns: []string{"n"}, Rows: [][]any{{v}}}}}
	}
	crit := errors.New("crit")
	answer := func(target, means string, verdict error) fanout.Result[fanout.Verdicted[string]] {
		return fanout.Result[fanout.Verdicted[string]]{Target: target, Value: fanout.Verdicted[string]{Doc: doc(1), Means: means, Verdict: verdict}}
	}
	gone := fanout.Result[fanout.Verdicted[string]]{Target: "gone", Err: errors.New("refused")}

	m := fanout.MergeVerdicts([]fanout.Result[fanout.Verdicted[string]]{
		answer("us", "ok", nil), answer("de", "crit", crit), answer("eu", "warn", errors.New("warn")), answer("jp", "crit", errors.New("second")),
	}, fanout.Order{}, severity)
	if m.Outcome != fanout.Complete || m.Worst != "crit" || m.VerdictOf != "de" || m.Verdict != crit || len(m.Failed) != 0 {
		t.Errorf("complete: %+v", m)
	}
	if len(m.Doc) != 1 || len(m.Doc[0].Table.Rows) != 4 {
		t.Errorf("complete: merged %+v, want one section of 4 rows", m.Doc)
	}

	m = fanout.MergeVerdicts([]fanout.Result[fanout.Verdicted[string]]{answer("us", "crit", crit), gone}, fanout.Order{}, severity)
	if m.Outcome != fanout.Partial || m.Verdict != nil || len(m.Failed) != 1 || m.Failed[0].Target != "gone" || m.Doc == nil {
		t.Errorf("partial: %+v", m)
	}

	m = fanout.MergeVerdicts([]fanout.Result[fanout.Verdicted[string]]{gone}, fanout.Order{}, severity)
	if m.Outcome != fanout.AllFailed || m.Doc != nil || len(m.Failed) != 1 {
		t.Errorf("all failed: %+v", m)
	}
}
