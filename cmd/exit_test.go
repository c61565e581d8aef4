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
