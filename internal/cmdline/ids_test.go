package cmdline

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// TestNonNegativeID: an id parses (spaces trimmed); a word or a negative id is a usage error
// with the hint as its Try: line.
func TestNonNegativeID(t *testing.T) {
	t.Parallel()
	if n, err := NonNegativeID("shard id", " 42 ", "outboxctl x"); n != 42 || err != nil {
		t.Fatalf("42: %d, %v", n, err)
	}
	for s, want := range map[string]string{
		"x":   `invalid shard id "x": want an integer id`,
		"-42": `invalid shard id "-42": want a non-negative integer id`,
	} {
		_, err := IDParser("shard id")(s, "outboxctl shards --shard 42")
		var o *exitcode.Outcome
		if !errors.As(err, &o) || o.Msg != want || o.Try != "outboxctl shards --shard 42" || exitcode.Code(context.Background(), err) != exitcode.ExitUsage {
			t.Errorf("%q: %#v, want the usage error %q", s, err, want)
		}
	}
	if n, err := ID("shard id", "-3", ""); n != -3 || err != nil {
		t.Errorf("ID -3: %d, %v (a negative id is NonNegativeID's to refuse)", n, err)
	}
}

// TestNegativeNumber: pflag's refusal of "-5" is a negative id; of "-x" it is not.
func TestNegativeNumber(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]string{"-5": "-5", "-42": "-42", "-x": ""} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		err := fs.Parse([]string{arg})
		got, ok := NegativeNumber(err)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q, %v (%v); want %q", arg, got, ok, err, want)
		}
	}
}

// TestFirstExample: the first example line that is a command, else the command's --help.
func TestFirstExample(t *testing.T) {
	t.Parallel()
	if got := FirstExample("  # a comment\n  outboxctl skip 1 --yes\n  outboxctl skip 2", "outboxctl skip"); got != "outboxctl skip 1 --yes" {
		t.Errorf("got %q", got)
	}
	if got := FirstExample("", "outboxctl skip"); got != "outboxctl skip --help" {
		t.Errorf("no example: %q", got)
	}
}
