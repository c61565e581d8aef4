package selector

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/refused"
)

func TestWordsSayTheFlagsBack(t *testing.T) {
	t.Parallel()
	if got := strings.Join(Flags{}.Words(), " "); got != "(no selector flag)" {
		t.Fatalf("no flag: %q", got)
	}
	f := Flags{Stuck: true, Scope: "organization", MinDepth: 5, Limit: 3, NotKillswitched: true}
	if got, want := strings.Join(f.Words(), " "), "--stuck --scope organization --min-depth 5 --limit 3 --not-killswitched"; got != want {
		t.Fatalf("words %q, want %q", got, want)
	}
}

func TestValidateRefusesWithATry(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f       Flags
		require bool
		try     string
	}{
		{Flags{MinDepth: -1}, false, "outboxctl x --min-depth 100"},
		{Flags{Limit: -1}, false, "outboxctl x --limit 100"},
		{Flags{AddedAfter: "yesterday"}, false, "outboxctl x --added-after 2h"},
		{Flags{Limit: 5}, true, "outboxctl x --stuck"}, // --limit alone is no criterion
	} {
		var r *refused.Error
		if err := c.f.Validate("outboxctl x", c.require); !errors.As(err, &r) || r.Try != c.try {
			t.Errorf("%+v: %v, want a refusal trying %q", c.f, err, c.try)
		}
	}
	if err := (Flags{Stuck: true, AddedBefore: "30m"}).Validate("outboxctl x", true); err != nil {
		t.Fatal(err)
	}
}

func TestResolveReadsNamesTimesAndTheList(t *testing.T) {
	t.Parallel()
	names := Names{
		Scope:    func(s string) (*query.Enum, error) { return &query.Enum{Value: 1, Name: s}, nil },
		Category: func(s string) (*query.Enum, error) { return &query.Enum{Value: 7, Name: s}, nil },
		ID:       func(s string) (int64, error) { return int64(len(s)), nil },
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	in := Input{Ctx: context.Background(), Stdin: strings.NewReader("organization 42\n"), Help: "outboxctl x --help"}
	s, err := Flags{Scope: "organization", Category: "C", AddedAfter: "2h", ShardsFrom: "-"}.Resolve("outboxctl x", now, names, in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Scope.Name != "organization" || s.Category.Value != 7 || !s.AddedAfter.Equal(now.Add(-2*time.Hour)) || len(s.Listed) != 1 {
		t.Fatalf("resolved %+v", s)
	}
	var r *refused.Error
	if _, err := ReadList("/nonexistent/list", names, in); !errors.As(err, &r) || r.Try != in.Help {
		t.Fatalf("a list that does not open: %v", err)
	}
}

// TestWithout: the bulk flags are added to what is dropped, the boolean ones marked as
// taking no value, and what the caller drops is kept.
func TestWithout(t *testing.T) {
	t.Parallel()
	d := Without(map[string]bool{"dsn": true, "dry-run": false})
	if !d["dsn"] || d["dry-run"] || !d["scope"] || !d["parallel"] || d["stuck"] || d["at-cap"] || d["fail-fast"] || len(d) != 2+len(BulkFlags) {
		t.Fatalf("Without: %v", d)
	}
}
