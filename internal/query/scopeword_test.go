package query

import "testing"

// TestScopeWord: a scope as a command's SCOPE argument; an unnamed or unknown scope is its
// integer (verify's next lines printed "unknown(7)", which no command takes).
func TestScopeWord(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		e    Enum
		want string
	}{
		{Enum{0, "ORGANIZATION_SCOPE"}, "organization"},
		{Enum{1, "USER_SCOPE"}, "user"},
		{Enum{7, "UNKNOWN(7)"}, "7"},
		{Enum{9, ""}, "9"},
	} {
		if got := tt.e.ScopeWord(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.e, got, tt.want)
		}
	}
}
