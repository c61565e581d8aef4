package query

import (
	"fmt"
	"strings"
	"testing"
)

// TestBindRemembered: Bind remembers a text's numbering, never its values: the same text
// bound again with other values gets those, and with a value missing or one too many is
// refused as the first Bind would refuse it.
func TestBindRemembered(t *testing.T) {
	t.Parallel()
	text := "SELECT @b, @a, @b /* @c in a comment */ WHERE x = '@d'"
	for i, c := range []struct {
		args Args
		sql  string
		vals string
		err  string
	}{
		{Args{"a": {Value: 1}, "b": {Value: 2}}, "SELECT $1, $2, $1 /* @c in a comment */ WHERE x = '@d'", "[2 1]", ""},
		{Args{"a": {Value: 3}, "b": {Value: 4}}, "SELECT $1, $2, $1 /* @c in a comment */ WHERE x = '@d'", "[4 3]", ""},
		{Args{"a": {Value: 3}}, "", "", "placeholder @b has no value"},
		{Args{"a": {Value: 3}, "b": {Value: 4}, "c": {Value: 5}}, "", "", "value @c is not used"},
		{Args{"a": {Value: 3}, "c": {Value: 5}}, "", "", "placeholder @b has no value"},
	} {
		sql, vals, err := Statement{Name: "t", Text: text, Args: c.args}.Bind()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("case %d: err %v, want %q", i, err, c.err)
			}
			continue
		}
		if err != nil || sql != c.sql || fmt.Sprint(vals) != c.vals {
			t.Fatalf("case %d: %q %v %v", i, sql, vals, err)
		}
	}
}

// TestLexSkipsNestedComments: PostgreSQL nests block comments, and the SQL files' EITHER
// forms are written so (the second form is a comment holding markers): a placeholder inside
// one is not the statement's, however deep, and the text after it is.
func TestLexSkipsNestedComments(t *testing.T) {
	t.Parallel()
	var params []string
	for _, tok := range lex("SELECT @a /* one /* two @b */ still @c */ @d /* @e */ -- @f\n@g /* unclosed /* @h */") {
		if tok.param != "" {
			params = append(params, tok.param)
		}
	}
	if got, want := strings.Join(params, ","), "a,d,g"; got != want {
		t.Fatalf("placeholders %q, want %q", got, want)
	}
}
