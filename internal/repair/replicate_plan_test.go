package repair

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// TestReplicatePlanNamesEachObjectOnce: a control model replicated to several cells has a
// row per cell; the plan named its id once per row ("apitoken: 5, 5"), now once, with its
// cells. One cell (a monolith, a cell model) keeps the plain id; a gone object is listed
// after the deletion outbox, once.
func TestReplicatePlanNamesEachObjectOnce(t *testing.T) {
	t.Parallel()
	w := replicateWork{
		objects: []replica.Object{{ObjectID: 5}, {ObjectID: 5}, {ObjectID: 3}, {ObjectID: 102, Gone: true}, {ObjectID: 102, Gone: true}},
		rows:    query.OutboxRows{Cells: []string{"de", "us", "us", "de", "us"}},
	}
	exist, gone := planObjects(w)
	if want := []string{"5 (cells de, us)", "3"}; !reflect.DeepEqual(exist, want) {
		t.Errorf("existing objects %q, want %q", exist, want)
	}
	if want := []string{"102 (cells de, us)"}; !reflect.DeepEqual(gone, want) {
		t.Errorf("gone objects %q, want %q", gone, want)
	}
	w.rows.Cells = nil // a cell model: no cells
	w.objects = w.objects[2:4]
	if exist, gone := planObjects(w); !reflect.DeepEqual(exist, []string{"3"}) || !reflect.DeepEqual(gone, []string{"102"}) {
		t.Errorf("a cell model's objects: %q %q", exist, gone)
	}
}
