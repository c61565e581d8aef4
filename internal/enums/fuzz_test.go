package enums

import (
	"strings"
	"testing"
)

// FuzzResolve checks that resolution never panics, that every error is one line, and that
// whatever resolves comes back to the same value when its canonical name is resolved again.
// CI runs the seed corpus; `go test -fuzz FuzzResolve ./internal/enums` explores further.
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{
		"organization", "ORGANIZATION_SCOPE", "user", "0", "48", "49", "-1", "raw:49", "raw:", "RAW:-3",
		"ORGANIZATON_UPDATE", "audit-log", "  ", "", "9999999999999999999999", "+3", "ü", "scope\n",
		"ORGANIZATION_UPDATE", "_SCOPE", "raw:2147483648",
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	r := Builtin()
	f.Fuzz(func(t *testing.T, input string, scope bool) {
		var (
			name  string
			value int
			err   error
		)
		if scope {
			var s Scope
			s, err = r.ResolveScope(input)
			name, value = s.Name, s.Value
		} else {
			var c Category
			c, err = r.ResolveCategory(input)
			name, value = c.Name, c.Value
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(input, "\n\r") {
				t.Fatalf("multi-line error for %q: %q", input, err)
			}
			return
		}
		if value < 0 {
			t.Fatalf("%q resolved to negative %d", input, value)
		}
		if strings.HasPrefix(name, "UNKNOWN(") {
			return // raw: integers have no canonical name to resolve again
		}
		var again int
		if scope {
			s, err2 := r.ResolveScope(name)
			again, err = s.Value, err2
		} else {
			c, err2 := r.ResolveCategory(name)
			again, err = c.Value, err2
		}
		if err != nil || again != value {
			t.Fatalf("%q -> %s (%d) -> %d, %v", input, name, value, again, err)
		}
	})
}
