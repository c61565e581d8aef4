package audit

import (
	"encoding/json"
	"testing"
	"time"
)

// TestLine: the line is one JSON object with who, when (UTC, seconds), the target, and the
// fields, which win over the fixed keys.
func TestLine(t *testing.T) {
	t.Setenv("SUDO_USER", "oncall")
	at := time.Date(2026, 12, 7, 19, 0, 0, 5, time.FixedZone("CET", 3600))
	var rec map[string]any
	if err := json.Unmarshal([]byte(Line("outboxctl skip", "sentry@db:5432/sentry", map[string]any{"reason": "INC-1", "target": "x"}, at)), &rec); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"audit": "outboxctl", "command": "outboxctl skip", "who": "oncall", "when": "2026-12-07T18:00:00Z", "target": "x", "reason": "INC-1"}
	if len(rec) != len(want) {
		t.Fatalf("line %v, want %v", rec, want)
	}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("%s: %v, want %v", k, rec[k], v)
		}
	}
}
