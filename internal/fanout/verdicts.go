package fanout

import (
	"io"
	"sync"

	"github.com/outboxctl/outboxctl/internal/render"
)

// Verdicted is one context's document and the verdict it ended with (a threshold, a
// warning, …; nil: none), Means ranking it in the caller's severity.
type Verdicted[M comparable] struct {
	Doc     render.Doc
	Means   M
	Verdict error
}

// Merged is what the contexts' documents come to: the merged document (nil when no context
// answered), the contexts that failed (in target order), the outcome, and the worst verdict
// with the context it came from (Verdict nil: none to end with).
type Merged[M comparable] struct {
	Doc       render.Doc
	Failed    []Result[Verdicted[M]]
	Outcome   Outcome
	Worst     M
	VerdictOf string
	Verdict   error
}

// MergeVerdicts merges the documents of the contexts that answered (MergeDocs, in order),
// and picks the worst of their verdicts by severity (best first, Worst): the caller says
// what a partial or failed outcome means, which outranks any verdict.
func MergeVerdicts[M comparable](results []Result[Verdicted[M]], order Order, severity []M) Merged[M] {
	m := Merged[M]{Outcome: OutcomeOf(results), Failed: Failures(results)}
	if m.Outcome != AllFailed {
		var answers []Answer
		for _, r := range results {
			if r.Err == nil {
				answers = append(answers, Answer{Context: r.Target, Doc: r.Value.Doc})
			}
		}
		m.Doc = MergeDocs(answers, order)
	}
	if m.Outcome != Complete {
		return m
	}
	meanings := make([]M, len(results))
	for i, r := range results {
		meanings[i] = r.Value.Means
	}
	m.Worst = Worst(meanings, severity)
	for _, r := range results {
		if r.Value.Means == m.Worst && r.Value.Verdict != nil {
			m.VerdictOf, m.Verdict = r.Target, r.Value.Verdict
			break
		}
	}
	return m
}

// LockedWriter lets the contexts' runs share one writer (stderr) without interleaving
// within a write.
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
