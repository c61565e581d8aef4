package query

import (
	"reflect"
	"testing"
)

// TestInt64s: an integer array reads whole; a NULL element or another type is an error
// naming the element, never a zero; an empty array is nil.
func TestInt64s(t *testing.T) {
	t.Parallel()
	if got, err := Int64s([]any{int64(3), int64(-1)}); err != nil || !reflect.DeepEqual(got, []int64{3, -1}) {
		t.Errorf("ints: %v %v", got, err)
	}
	if got, err := Int64s([]any{}); err != nil || got != nil {
		t.Errorf("empty: %#v %v", got, err)
	}
	for _, c := range []struct {
		cells []any
		want  string
	}{
		{[]any{int64(1), nil}, "NULL at element 2 where int64 is expected"},
		{[]any{"7"}, "string at element 1 where int64 is expected"},
	} {
		if _, err := Int64s(c.cells); err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.cells, err, c.want)
		}
	}
}
