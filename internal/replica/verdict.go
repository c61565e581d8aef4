package replica

import "github.com/outboxctl/outboxctl/internal/exitcode"

// DriftVerdict is verify --fail-on-drift's verdict on results: drift (exit 9) when an
// object is missing, stale or orphan, "not yet" (8) when the only ones not in sync are
// pending.
func DriftVerdict(results []Result) error {
	drifted, pending := DriftCounts(results)
	switch {
	case drifted > 0:
		return exitcode.Verdictf(exitcode.Drift, "verify: %d object(s) missing, stale or orphan, %d pending", drifted, pending)
	case pending > 0:
		return exitcode.Verdictf(exitcode.Pending, "verify: %d object(s) pending: their outbox rows are queued", pending)
	}
	return nil
}
