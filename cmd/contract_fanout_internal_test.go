package cmd

import "testing"

// TestFanOutSchemaRefusesWhatAMergeNeverPrints: the fan-out schema the output hook checks a
// read over contexts against requires each row's context and refuses a key no row type has,
// and a single-target schema refuses the context key.
func TestFanOutSchemaRefusesWhatAMergeNeverPrints(t *testing.T) {
	t.Parallel()
	good := `[{"context": "us", "category": null, "category_name": "(total)", "depth": 2}, {"context": "de", "category": 3, "category_name": "X", "depth": 1}]`
	if err := validateOutput("depth", true, []byte(good)); err != nil {
		t.Fatalf("a merged depth document refused: %v", err)
	}
	for _, bad := range []string{
		`[{"category": null, "category_name": "(total)", "depth": 2}]`,
		`[{"context": "us", "depth": 2, "attempts": 1}]`,
	} {
		if validateOutput("depth", true, []byte(bad)) == nil {
			t.Errorf("accepted over contexts: %s", bad)
		}
	}
	if validateOutput("depth", false, []byte(good)) == nil {
		t.Error("the single-target schema accepted rows with a context key")
	}
}
