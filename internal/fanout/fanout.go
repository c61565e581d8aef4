// Package fanout runs one read against several targets (Sentry cells and the control silo)
// at once, bounded, and merges what came back: rows from the targets that answered, one
// error per target that did not. A slow or dead cell costs its own timeout, not the sum of
// everyone's, and never hides the other cells' rows.
package fanout

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// DefaultLimit is how many targets run at once: enough for a handful of cells and the
// control silo, few enough not to look like a connection storm to any one PgBouncer.
const DefaultLimit = 4

// Result is one target's answer: Value, or Err when it failed.
type Result[T any] struct {
	Target  string
	Value   T
	Err     error
	Elapsed time.Duration
}

// Options bound a run. Timeout (0: none) is each target's own deadline, on top of the
// statement and connect timeouts its connection already carries.
type Options struct {
	Limit   int
	Timeout time.Duration
}

// Run calls fn for every target, at most opts.Limit at a time, and returns the results in
// the targets' order whatever order they finished in. A panic in fn becomes that target's
// error. Run returns when every call has returned; cancelling ctx makes the calls not yet
// started fail with ctx's error.
func Run[T any](ctx context.Context, targets []string, opts Options, fn func(ctx context.Context, target string) (T, error)) []Result[T] {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	out := make([]Result[T], len(targets))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, t := range targets {
		out[i].Target = t
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				out[i].Err = ctx.Err()
				return
			}
			start := time.Now()
			out[i].Value, out[i].Err = call(ctx, t, opts.Timeout, fn)
			out[i].Elapsed = time.Since(start)
		}()
	}
	wg.Wait()
	return out
}

// call runs fn for one target under its own deadline, turning a panic into an error.
func call[T any](ctx context.Context, target string, timeout time.Duration, fn func(context.Context, string) (T, error)) (v T, err error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in context %s: %v", target, r)
		}
	}()
	return fn(ctx, target)
}

// Outcome says how much of a fan-out answered.
type Outcome int

// The outcomes, from best to worst.
const (
	Complete  Outcome = iota // every target answered
	Partial                  // some answered, some failed: print the rows, report the failures
	AllFailed                // nothing to print
)

// OutcomeOf classifies results. No targets at all is Complete (nothing failed).
func OutcomeOf[T any](results []Result[T]) Outcome {
	failed := len(Failures(results))
	switch {
	case failed == 0:
		return Complete
	case failed == len(results):
		return AllFailed
	}
	return Partial
}

// Failures returns the results that failed, in target order.
func Failures[T any](results []Result[T]) []Result[T] {
	var out []Result[T]
	for _, r := range results {
		if r.Err != nil {
			out = append(out, r)
		}
	}
	return out
}

// Worst combines per-target verdicts (the exit codes, or meanings, of the targets that
// answered) into one: the verdict that comes last in severity, the caller's order from best
// to worst. A verdict missing from severity counts as worse than all of them.
func Worst[C comparable](codes, severity []C) C {
	rank := func(c C) int {
		if i := slices.Index(severity, c); i >= 0 {
			return i
		}
		return len(severity)
	}
	var worst C
	if len(severity) > 0 {
		worst = severity[0]
	}
	for _, c := range codes {
		if rank(c) > rank(worst) {
			worst = c
		}
	}
	return worst
}

// Tagged is one row with the context it came from.
type Tagged[R any] struct {
	Context string
	Row     R
}

// Flatten merges typed rows from the targets that answered, each tagged with its context,
// sorted by less as the single-target command sorts; rows that compare equal keep the
// targets' order, and within a target their own order.
func Flatten[R any](results []Result[[]R], compare func(a, b R) int) []Tagged[R] {
	var out []Tagged[R]
	for _, r := range results {
		if r.Err != nil {
			continue
		}
		for _, row := range r.Value {
			out = append(out, Tagged[R]{Context: r.Target, Row: row})
		}
	}
	slices.SortStableFunc(out, func(a, b Tagged[R]) int { return compare(a.Row, b.Row) })
	return out
}

// ContextColumn is the column Merge puts first: the JSON key is "context".
const ContextColumn = "context"

// Table is rows under named columns, as internal/query returns them.
type Table struct {
	Columns []string
	Rows    [][]any
}

// Merge joins the tables of the targets that answered into one with a leading context
// column, sorted by compare (nil: keep the targets' order). Every table must have the same
// columns: two cells whose schemas differ would otherwise line up values under the wrong
// heading.
func Merge(results []Result[Table], compare func(a, b []any) int) (Table, error) {
	var out Table
	var first string
	for _, r := range results {
		if r.Err != nil {
			continue
		}
		if out.Columns == nil {
			out.Columns, first = append([]string{ContextColumn}, r.Value.Columns...), r.Target
		} else if !slices.Equal(out.Columns[1:], r.Value.Columns) {
			return Table{}, fmt.Errorf("context %s returned columns %v, context %s %v: the schemas differ", r.Target, r.Value.Columns, first, out.Columns[1:])
		}
		for _, row := range r.Value.Rows {
			out.Rows = append(out.Rows, append([]any{r.Target}, row...))
		}
	}
	if compare != nil {
		slices.SortStableFunc(out.Rows, func(a, b []any) int { return compare(a[1:], b[1:]) })
	}
	return out, nil
}

// ByColumns returns a compare for Merge ordering rows by the given column indexes, each
// ascending or descending, as the single-target SQL's ORDER BY does. Values compare as
// int64, float64, string or time.Time; nil sorts first.
func ByColumns(keys ...Key) func(a, b []any) int {
	return func(a, b []any) int {
		for _, k := range keys {
			c := compareValues(a[k.Index], b[k.Index])
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
}

// Key is one sort key of ByColumns.
type Key struct {
	Index int
	Desc  bool
}

func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmp.Compare(x, y)
		}
	case int:
		if y, ok := b.(int); ok {
			return cmp.Compare(x, y)
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmp.Compare(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return cmp.Compare(x, y)
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case bool:
		if y, ok := b.(bool); ok && x != y {
			return map[bool]int{false: -1, true: 1}[x]
		}
		return 0
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}
