package backfill

import (
	"fmt"
	"testing"
)

// FuzzParseRedisCursor: parsing never panics, refuses with one of three fixed messages, and
// whatever it accepts is exactly a [low, version] pair that prints and parses back the same.
// CI runs the seeds; `make fuzz` explores for 30 s.
func FuzzParseRedisCursor(f *testing.F) {
	for _, s := range []string{
		"[0,1]", "[12345,3]", "[12345, 3]", " [1,2]\n", "[1, 2] x", "[1,2][3,4]", "not json", "[1]", "[1,2,3]",
		`["1",2]`, "[1.5,2]", "[1,99999999999999999999]", "", "null", "{}", "[-1,-2]", "[1e3,2]", "[1,2]\x00",
		"[9223372036854775807,0]", "[\n1\n,\n2\n]", "\ufeff[1,2]",
	} {
		f.Add(s)
	}
	known := map[string]bool{
		"not a JSON [low, version] pair":          true,
		"text after the JSON [low, version] pair": true,
		"not a pair of integers":                  true,
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := ParseRedisCursor(raw)
		if err != nil {
			if !known[err.Error()] {
				t.Fatalf("unexpected error %q for %q", err, raw)
			}
			return
		}
		again, err := ParseRedisCursor(fmt.Sprintf("[%d,%d]", c.Low, c.Version))
		if err != nil || again != c {
			t.Fatalf("%q -> %+v, printed and parsed again -> %+v, %v", raw, c, again, err)
		}
	})
}
