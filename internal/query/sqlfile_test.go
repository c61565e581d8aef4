package query

import (
	"strings"
	"testing"
)

func TestEmbeddedSQLFiles(t *testing.T) {
	t.Parallel()
	set, err := sqlSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Names()) == 0 {
		t.Fatal("no statements embedded")
	}
	if _, err := Fill("no-such-statement", nil); err == nil || !strings.Contains(err.Error(), `no statement "no-such-statement"`) {
		t.Errorf("unknown statement: %v", err)
	}
	st := sqlStatement("no-such-statement", nil, nil, nil)
	if _, err := st.Render(); err == nil {
		t.Error("Render of a statement that could not be filled succeeded")
	}
	if _, _, err := st.Bind(); err == nil {
		t.Error("Bind of a statement that could not be filled succeeded")
	}
}
