package inspect

import "github.com/outboxctl/outboxctl/internal/exitcode"

// DepthVerdict is shards --fail-if-depth's verdict on the listing: exit 3 naming the first
// listed shard holding more than limit rows (0: no threshold).
func (l Listing) DepthVerdict(limit int64) error {
	if limit <= 0 {
		return nil
	}
	over, err := l.Over(limit)
	if over == nil || err != nil {
		return err
	}
	return exitcode.Verdictf(exitcode.Threshold, "shard %d/%d holds %d rows, more than --fail-if-depth %d", over.Scope, over.ID, over.Depth, limit)
}
