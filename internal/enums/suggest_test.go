package enums

import "testing"

// TestAbbreviationsGetSuggestions: a name shortened word by word (ORG_UPDATE) gets the names
// it shortens, which no edit distance reaches; the message is exact.
func TestAbbreviationsGetSuggestions(t *testing.T) {
	t.Parallel()
	r := Builtin()
	for _, tt := range []struct{ in, want string }{
		{"ORG_UPDATE", `unknown category "ORG_UPDATE"; did you mean ORGANIZATION_UPDATE? (run ` + "`outboxctl enums list`" + ` to see every name)`},
		{"org_member_upd", `unknown category "org_member_upd"; did you mean ORGANIZATION_MEMBER_UPDATE? (run ` + "`outboxctl enums list`" + ` to see every name)`},
	} {
		_, err := r.ResolveCategory(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v\nwant %s", tt.in, err, tt.want)
		}
	}
	if abbreviates("ORGANIZATION_UPDATE", "ORGANIZATION_UPDATE") || abbreviates("ORG", "ORGANIZATION_UPDATE") || abbreviates("ORG__UPDATE", "ORGANIZATION_X_UPDATE") {
		t.Error("abbreviates matched an exact name, a word count mismatch or an empty word")
	}
}
