package render

import (
	"reflect"
	"testing"
	"time"
)

type typedRow struct {
	Name    string     `json:"name" label:"who"`
	Raw     int        `json:"raw" render:"machine"`
	Summary string     `json:"summary" render:"human"`
	When    *time.Time `json:"when"`
	Any     any        `json:"any"`
	Skip    string     `json:"-"`
	hidden  string     // an unexported field is no column
}

type countField struct{ n *int }

func (c countField) CardFields(key string) []Field {
	if c.n == nil {
		return []Field{{Key: key, Value: "unknown", HumanOnly: true}, {Key: key, Value: nil, MachineOnly: true}}
	}
	return []Field{{Key: key, Value: *c.n}}
}

type typedCard struct {
	Shard   string     `json:"shard"`
	Count   countField `json:"count"`
	InDoubt string     `json:"in_doubt,omitempty"`
}

// TestTableOfIsTheHandBuiltTable: a table built from a struct is the one a command used to
// build by hand: columns from the json tags in field order, labels and column flags from
// the tags, a nil pointer an empty cell, a pointer its value, an any field as it is.
func TestTableOfIsTheHandBuiltTable(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	got := TableOf([]typedRow{{Name: "a", Raw: 1, Summary: "s", When: &at, Any: Due(at), hidden: "h"}, {Name: "b"}})
	want := &Table{Columns: []string{"name", "raw", "summary", "when", "any"},
		Rows:        [][]any{{"a", 1, "s", at, Due(at)}, {"b", 0, "", nil, nil}},
		Labels:      map[string]string{"name": "who"},
		MachineOnly: map[string]bool{"raw": true}, HumanOnly: map[string]bool{"summary": true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

// TestFieldsOfExpandsCountsAndDropsEmptyOptionals: an omitempty field that is zero is left
// out of the card, a CardFielder gives its own fields.
func TestFieldsOfExpandsCountsAndDropsEmptyOptionals(t *testing.T) {
	t.Parallel()
	n := 3
	if got, want := FieldsOf(typedCard{Shard: "s", Count: countField{&n}}), []Field{{Key: "shard", Value: "s"}, {Key: "count", Value: 3}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	got := FieldsOf(typedCard{Shard: "s", InDoubt: "in doubt"})
	want := []Field{{Key: "shard", Value: "s"}, {Key: "count", Value: "unknown", HumanOnly: true}, {Key: "count", Value: nil, MachineOnly: true}, {Key: "in_doubt", Value: "in doubt"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
