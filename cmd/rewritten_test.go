package cmd_test

import (
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
)

// TestAFlagNeverTakesTheWordOfABareJSONOrWatch: the words a bare --json (or --watch 2s)
// stands for on the command line are never another flag's value: `skip 123 --reason
// --json --print-sql` gave --reason "--json=\x00list" as its reason, which reached the SQL
// comment (and, run, the audit line and the archive). It is a usage error now; a real value
// still works.
func TestAFlagNeverTakesTheWordOfABareJSONOrWatch(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"skip", "123", "--reason", "--json", "--print-sql"},
		{"reschedule", "organization", "1", "--reason", "--json"},
		{"shards", "--scope", "--watch", "2s"},
	} {
		out, errOut := runCLIExpect(t, cmd.ExitUsage, args...)
		if strings.Contains(out+errOut, "\x00") || !strings.Contains(errOut, "needs a value: it was given none before --") {
			t.Errorf("outboxctl %s:\n%s\n%s", strings.Join(args, " "), out, errOut)
		}
	}
	out, _ := runCLIExpect(t, 0, "skip", "123", "--reason", "INC-1 poison", "--print-sql")
	if !strings.Contains(out, "INC-1 poison") {
		t.Fatalf("a real reason is lost:\n%s", out)
	}
}
