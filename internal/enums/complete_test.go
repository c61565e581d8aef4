package enums

import (
	"slices"
	"testing"
)

// TestComplete: a name typed in lower case completes in lower case, a scope also without
// its _scope suffix; one typed in upper case completes as Sentry spells it.
func TestComplete(t *testing.T) {
	t.Parallel()
	r := Builtin()
	lower := r.Complete(KindScope, "org")
	if !slices.Contains(lower, "organization") || !slices.Contains(lower, "organization_scope") {
		t.Errorf("Complete(scope, org) = %v, want organization and organization_scope", lower)
	}
	upper := r.Complete(KindScope, "ORG")
	if !slices.Contains(upper, "ORGANIZATION_SCOPE") || slices.Contains(upper, "organization") {
		t.Errorf("Complete(scope, ORG) = %v, want ORGANIZATION_SCOPE only in upper case", upper)
	}
	for _, c := range r.Complete(KindCategory, "organization_m") {
		if c[:14] != "organization_m" {
			t.Errorf("Complete(category, organization_m) offers %q", c)
		}
	}
	if got := r.Complete(KindCategory, "no_such_"); got != nil {
		t.Errorf("Complete(category, no_such_) = %v, want nothing", got)
	}
}
