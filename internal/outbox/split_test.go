package outbox

import (
	"context"
	"testing"
)

// TestVerifyCell: the cell given wins; one database is the monolith's; two contexts name the
// cell context's cell setting, else its name (not checked when only printing).
func TestVerifyCell(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	named := &SplitSides{Cell: SplitSide{Context: "us", Cell: "us-east"}}
	unnamed := &SplitSides{Cell: SplitSide{Context: "us"}}
	for _, tt := range []struct {
		sides *SplitSides
		given string
		want  string
	}{
		{nil, "de", "de"},
		{nil, "", MonolithCell},
		{named, "", "us-east"},
		{unnamed, "", "us"},
		{unnamed, "de", "de"},
	} {
		got, err := VerifyCell(ctx, tt.sides, tt.given, false, t.Logf)
		if err != nil || got != tt.want {
			t.Errorf("%+v, given %q: %q, %v; want %q", tt.sides, tt.given, got, err, tt.want)
		}
	}
	// A cell setting is never checked against the mappings: nothing to assume.
	if got, err := VerifyCell(ctx, named, "", true, t.Logf); err != nil || got != "us-east" {
		t.Errorf("checked, with a cell setting: %q, %v", got, err)
	}
}
