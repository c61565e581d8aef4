package cmd

import (
	"context"
	"errors"
	"testing"

	"github.com/outboxctl/outboxctl/internal/render"
)

// TestPrintErrorEscapesControlCharacters feeds printError what a hostile handler returns (a
// response body that retitles the terminal and erases lines) and a hint with a newline: the
// output must stay the promised lines, with every control character shown escaped.
func TestPrintErrorEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	io, _, errOut := render.Test()
	err := errors.New("handler returned 500: \x1b]0;pwned\x07oops\x1b[2K\r\n\tdetail\u2028\x9b")
	printError(context.Background(), io, err, "")
	want := "Error: handler returned 500: \\x1b]0;pwned\\x07oops\\x1b[2K detail \\x9b\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}

	io, _, errOut = render.Test()
	printError(context.Background(), io, usageErrorf("use --reason 'x'\n\x1b[1AError: forged", "bad \x1b[31mflag"), "outboxctl x")
	want = "Error: bad \\x1b[31mflag\nTry: use --reason 'x' \\x1b[1AError: forged\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

// TestExitCodesAreTyped: a runtime failure whose text happens to read like cobra's (a handler
// answering "invalid argument", a table called "unknown command") is a failure, exit 1; only
// typed usage errors exit 2. Cobra's own errors are typed where cobra returns them.
func TestExitCodesAreTyped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, msg := range []string{"invalid argument for handler", "handler: unknown command", "accepts 3 rows"} {
		if got := exitCode(ctx, errors.New(msg)); got != ExitError {
			t.Errorf("exitCode(%q) = %d, want %d", msg, got, ExitError)
		}
	}
	for _, args := range [][]string{
		{"nosuchcommand"}, {"shards", "--nope"}, {"shards", "--fail-if-depth", "x"},
		{"completion", "bash", "extra"}, {"version", "extra"}, {"inspect", "shard", "a"},
	} {
		io, _, errOut := render.Test()
		if got := Main(ctx, args, io); got != ExitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, got, ExitUsage, errOut.String())
		}
	}
}
