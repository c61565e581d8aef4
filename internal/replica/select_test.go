package replica_test

import (
	"testing"

	"github.com/outboxctl/outboxctl/internal/replica"
)

// TestSelect: no name is every pair; a name or a table's name is its pair; an unknown one
// is an error naming the known pairs.
func TestSelect(t *testing.T) {
	t.Parallel()
	all, err := replica.Select(nil)
	if err != nil || len(all) != len(replica.Pairs()) {
		t.Fatalf("Select(nil) = %d pairs, %v; want every pair (%d)", len(all), err, len(replica.Pairs()))
	}
	one, err := replica.Select([]string{all[0].Name, all[0].Source})
	if err != nil || len(one) != 2 || one[0].Name != all[0].Name || one[1].Name != all[0].Name {
		t.Fatalf("Select(%s, %s) = %v, %v", all[0].Name, all[0].Source, one, err)
	}
	if _, err := replica.Select([]string{all[0].Name, "no_such_pair"}); err == nil {
		t.Fatal("Select(no_such_pair) = nil error")
	}
}
