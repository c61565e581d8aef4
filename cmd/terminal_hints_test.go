package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/repair"
)

// TestDeclinedPromptSaysOnlyCancelled: answering N at a prompt prints the plan, the question
// and one cancel line, exit 2, and no "Run … --help" (the command line was fine).
func TestDeclinedPromptSaysOnlyCancelled(t *testing.T) {
	t.Parallel()
	io, out, errOut := render.Test()
	io.InTTY, io.ErrTTY = true, true
	io.In = strings.NewReader("n\n")
	a := &app{io: io}
	err := a.confirm("outboxctl skip", repair.Plan{Lines: []string{"delete message 7"}}, false)
	printError(context.Background(), io, err, "outboxctl skip")
	want := "\n  - delete message 7\nProceed? [y/N] Error: cancelled: nothing was changed\n"
	if got := exitCode(context.Background(), err); got != ExitUsage || !strings.HasPrefix(errOut.String(), "Plan:\n  - target: database ") ||
		!strings.HasSuffix(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 4 || out.Len() != 0 {
		t.Errorf("exit %d, stderr %q, want %q", got, errOut.String(), want)
	}
}

// TestLongAnswerIsNoConsent: an answer over the prompt's cap is read no further and is not a
// yes, whatever it starts with.
func TestLongAnswerIsNoConsent(t *testing.T) {
	t.Parallel()
	io, _, errOut := render.Test()
	io.InTTY, io.ErrTTY = true, true
	io.In = strings.NewReader("yes" + strings.Repeat(" ", 8<<20) + "\n")
	a := &app{io: io}
	err := a.confirm("outboxctl skip", repair.Plan{Lines: []string{"delete message 7"}}, false)
	if got := exitCode(context.Background(), err); got != ExitUsage || err.Error() != "cancelled: nothing was changed" {
		t.Errorf("exit %d, %v, stderr %q", got, err, errOut.String())
	}
	io.In = strings.NewReader(" yes \n")
	if err := a.confirm("outboxctl skip", repair.Plan{Lines: []string{"delete message 7"}}, false); err != nil {
		t.Errorf("a short yes: %v", err)
	}
}

// TestBadDSNIsUsage: a --dsn that does not parse is a bad flag value, exit 2, with the hint
// the connection error carries and no second usage line; the password never prints.
func TestBadDSNIsUsage(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"not a dsn", "postgres://u:s3cret@host:notaport/db"} {
		io, out, errOut := render.Test()
		got := Main(context.Background(), []string{"depth", "--dsn", dsn}, io)
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if got != ExitUsage || out.Len() != 0 || len(lines) != 1 ||
			!strings.HasPrefix(lines[0], "Error: invalid connection string: ") ||
			!strings.HasSuffix(lines[0], "; pass --dsn postgres://USER@HOST:5432/DB or set PGHOST/PGDATABASE") ||
			strings.Contains(errOut.String(), "s3cret") {
			t.Errorf("--dsn %q: exit %d, stderr %q", dsn, got, errOut.String())
		}
	}
}
