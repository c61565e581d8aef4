package selection

import (
	"context"
	"testing"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// TestNeedsDatabase: a verdict flag, --json, --jq or machine output without a database is a
// usage error naming the first of them; a table, or nothing asked, is fine.
func TestNeedsDatabase(t *testing.T) {
	t.Parallel()
	none := func(string) bool { return false }
	for _, tt := range []struct {
		given           func(string) bool
		fields, jq, out string
		asked           string
	}{
		{none, "", "", "", ""},
		{none, "", "", "table", ""},
		{func(f string) bool { return f == "fail-if-depth" }, "a", "", "json", "--fail-if-depth"},
		{none, "shard", ".x", "", "--json"},
		{none, "", ".x", "", "--jq"},
		{none, "", "", "csv", "-o csv"},
		{none, "", "", "jsonl", "-o jsonl"},
	} {
		err := NeedsDatabase(tt.given, tt.fields, tt.jq, tt.out)
		if tt.asked == "" {
			if err != nil {
				t.Errorf("%+v: %v, want nil", tt, err)
			}
			continue
		}
		want := tt.asked + " needs a database to answer, and none is given: pass --dsn (or set OUTBOXCTL_DSN, or PGHOST and PGDATABASE)"
		if err == nil || err.Error() != want || exitcode.Code(context.Background(), err) != exitcode.ExitUsage {
			t.Errorf("%q: %v, want the usage error %q", tt.asked, err, want)
		}
	}
}
