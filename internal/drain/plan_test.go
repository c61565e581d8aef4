package drain_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/drain"
)

// The summary's card and its JSON are one document: the card's keys are Summary's JSON
// fields in their order, with and without the fields a drain may leave out.
func TestSummaryCardIsItsJSON(t *testing.T) {
	t.Parallel()
	failed := drain.Message{ID: 7, CategoryName: "USER_UPDATE"}
	for _, res := range []drain.Result{
		{Delivered: 2, Deleted: 3},
		{Delivered: 1, Uncommitted: 1, Contended: true, Failed: &failed, FailedErr: errors.New("x"), Abandoned: &failed},
	} {
		s := drain.Summarize(org(1), res, drain.AfterState(4, time.Now().Add(time.Minute), time.Now()), res.Failed != nil, 1500*time.Millisecond)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		dec := json.NewDecoder(bytes.NewReader(b))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		var card []string
		for _, f := range s.Card() {
			card = append(card, f.Key)
		}
		if !reflect.DeepEqual(keys, card) {
			t.Fatalf("card keys %v, JSON keys %v", card, keys)
		}
	}
}
