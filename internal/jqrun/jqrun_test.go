package jqrun

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain: the evaluator is a copy of the running executable, this test binary.
func TestMain(m *testing.M) {
	RunChildIfAsked()
	os.Exit(m.Run())
}

// run evaluates expr on each of inputs under lim, returning the results (strings raw, the
// rest as JSON), the evaluator's peak resident memory and Close's error.
func run(t *testing.T, expr string, lim Limits, inputs ...string) (string, int64, error) {
	t.Helper()
	var out strings.Builder
	r, err := Start(context.Background(), expr, lim, func(s string, isString bool, js []byte) error {
		if isString {
			out.WriteString(s + "\n")
		} else {
			out.Write(append(js, '\n'))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		if _, err := r.Write([]byte(in)); err != nil {
			break // Close says why
		}
	}
	err = r.Close()
	var peak int64
	if ru, ok := r.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10
	}
	return out.String(), peak, err
}

// TestEvaluatesAsJq: results as they were in process: strings raw, the rest compact JSON,
// JSONL values one by one, halt ending a value's results, the expression's error as Error.
func TestEvaluatesAsJq(t *testing.T) {
	t.Parallel()
	lim := Limits{Timeout: time.Minute, MaxBytes: 64 << 20}
	got, _, err := run(t, `.a, {b: .a}, (if .a == 2 then halt else empty end), "after"`, lim, `{"a": 1}`+"\n", `{"a":`, ` 2}`, "\n")
	if want := "1\n{\"b\":1}\nafter\n2\n{\"b\":2}\n"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	got, _, err = run(t, `error("boom")`, lim, `{}`)
	var je *Error
	if got != "" || !errors.As(err, &je) || je.Bound != "" || err.Error() != "error: boom" {
		t.Errorf("got %q, %#v; want the expression's error", got, err)
	}
}

// TestBoundsStopRunaways: the expressions, each once reaching gigabytes in
// process, stop at --max-jq-bytes with the evaluator's peak resident memory within a few
// times the cap (one allocation may reach the address-space cap, twice it above the start);
// one that only runs long stops at --jq-timeout.
func TestBoundsStopRunaways(t *testing.T) {
	t.Parallel()
	const maxBytes = 64 << 20
	for _, expr := range []string{`[range(1e9)]`, `def f: [f]; f`, `"a" * 1000000000`, `[] | .[500000000] = 1`} {
		_, peak, err := run(t, expr, Limits{Timeout: 5 * time.Minute, MaxBytes: maxBytes}, `{}`)
		var je *Error
		if !errors.As(err, &je) || je.Bound != "--max-jq-bytes" || !strings.Contains(err.Error(), "64MiB cap on its memory (--max-jq-bytes)") {
			t.Errorf("%s: err = %v, want the --max-jq-bytes bound", expr, err)
		}
		if peak > 4*maxBytes && !raceEnabled { // under -race one allocation is not capped (race.go)
			t.Errorf("%s: the evaluator's peak RSS was %d MiB, want at most %d", expr, peak>>20, 4*maxBytes>>20)
		}
	}
	start := time.Now()
	_, _, err := run(t, `last(range(1e12))`, Limits{Timeout: 200 * time.Millisecond, MaxBytes: maxBytes}, `{}`)
	var je *Error
	if !errors.As(err, &je) || je.Bound != "--jq-timeout" || !strings.Contains(err.Error(), "longer than --jq-timeout 200ms") {
		t.Errorf("err = %v after %s, want the --jq-timeout bound", err, time.Since(start))
	}
}
