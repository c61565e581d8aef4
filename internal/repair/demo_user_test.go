package repair

import "testing"

// TestDemoUser: the DSN set, the libpq variables alone, or nothing.
func TestDemoUser(t *testing.T) {
	t.Parallel()
	if DemoUser("postgres://x", true) != "postgres://x" || DemoUser("", true) != "(the libpq variables)" || DemoUser("", false) != "" {
		t.Fatal("DemoUser")
	}
}
