package cmd

import (
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestNextSaysSiloCellUnderAControlSilo: under a context (or flags) whose silo is control, a
// next step about a cell outbox names --silo cell; without it the pasted command read the
// control outbox ("pass --cell", or an empty shard).
func TestNextSaysSiloCellUnderAControlSilo(t *testing.T) {
	for _, tt := range []struct {
		silo string
		t    query.Target
		want string
	}{
		{"control", query.Target{Silo: query.SiloCell}, "outboxctl --silo cell inspect shard organization 1"},
		{"cell", query.Target{Silo: query.SiloCell}, "outboxctl inspect shard organization 1"},
		{"control", query.Target{Silo: query.SiloControl, Cell: "us"}, "outboxctl --silo control --cell us inspect shard organization 1"},
	} {
		a := &app{}
		a.g.Silo = tt.silo
		if got := a.nextCommand(&tt.t, "inspect", "shard", "organization", "1"); got != tt.want {
			t.Errorf("silo %s, target %+v: %q, want %q", tt.silo, tt.t, got, tt.want)
		}
	}
}
