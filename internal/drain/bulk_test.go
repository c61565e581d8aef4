package drain

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
)

// TestBulkBatchesBoundedByShardsAndRows: a batch ends at BatchShards shards or before the
// shard that would take it past BatchRows rows, and a shard deeper than BatchRows is a batch
// of its own.
func TestBulkBatchesBoundedByShardsAndRows(t *testing.T) {
	t.Parallel()
	depths := []int64{10, 10, 10, 50, 5, 5, 5, 5, 5, 200, 1}
	b := &Bulk{Shards: make([]query.ShardRef, len(depths)), Depths: depths, BatchShards: 4, BatchRows: 40}
	var sizes []int
	for start, end := 0, 0; start < len(depths); start = end {
		end = b.batchEnd(start, b.BatchShards)
		sizes = append(sizes, end-start)
	}
	// 10+10+10 (the 50 would pass 40) | 50 alone | 5×4 (four shards) | 5 (200 would pass) | 200 | 1
	if want := []int{3, 1, 4, 1, 1, 1}; !reflect.DeepEqual(sizes, want) {
		t.Errorf("batch sizes = %v, want %v", sizes, want)
	}
	b.Depths = nil // no depths: shards alone bound a batch
	if end := b.batchEnd(0, 4); end != 4 {
		t.Errorf("without depths, batch ends at %d, want 4", end)
	}
}
