package report

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/render"
)

// TestWithNextIsTheDeclaredField: a card ends with NextSteps' key when there is a next step
// and gains nothing when there is none.
func TestWithNextIsTheDeclaredField(t *testing.T) {
	card := []render.Field{{Key: "id", Value: 1}}
	if got := WithNext(card, nil); len(got) != 1 {
		t.Fatalf("no next step added %v", got)
	}
	next := render.Commands{"outboxctl inspect shard organization 1"}
	got := WithNext(card, next)
	if len(got) != 2 || got[1].Key != render.JSONKeys(reflect.TypeFor[NextSteps]())[0] || !reflect.DeepEqual(got[1].Value, next) {
		t.Fatalf("WithNext: %+v", got)
	}
}
