package query

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// unquote reads back a literal Literal produced, the way PostgreSQL's lexer does for the
// two forms it uses: plain quoted (a doubled quote for a quote) and E-quoted (also a doubled backslash). It reports whether the
// literal is exactly one complete string token.
func unquote(lit string) (string, bool) {
	escape := false
	if strings.HasPrefix(lit, "E'") {
		escape = true
		lit = lit[1:]
	}
	if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\'':
			if i+1 >= len(body) || body[i+1] != '\'' {
				return "", false // a lone quote would end the literal early
			}
			b.WriteByte('\'')
			i++
		case escape && c == '\\':
			if i+1 >= len(body) || body[i+1] != '\\' {
				return "", false // only \\ is emitted; anything else would be an escape
			}
			b.WriteByte('\\')
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// FuzzLiteral checks that every string Literal accepts comes back unchanged from a lexer
// that follows PostgreSQL's rules, as one complete token, whatever quotes, backslashes,
// comment markers or newlines it holds. CI runs the seed corpus; `make fuzz` explores.
func FuzzLiteral(f *testing.F) {
	for _, s := range []string{
		"", "us", "o'clock", `a\b`, `\'`, `'; DROP TABLE y; --`, "x'; DROP TABLE y; --", "line\nbreak",
		"/* c */", "''", `\\`, "E'", "$$", "$tag$", "ü", "\r\n", "\x00", "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit, err := Literal(s)
		if err != nil {
			if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
				t.Fatalf("Literal(%q) refused valid text: %v", s, err)
			}
			return
		}
		got, ok := unquote(lit)
		if !ok || got != s {
			t.Fatalf("Literal(%q) = %s, reads back as %q (complete=%v)", s, lit, got, ok)
		}
		// The literal inside a rendered statement must not be able to change its shape.
		st := Statement{Name: "fuzz", Text: "SELECT @v AS v", Args: Args{"v": {Value: s, Note: s}}}
		out, err := st.Render()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(out, ";\n") || strings.Count(out, "\n-- outboxctl:") > 0 {
			t.Fatalf("rendered statement lost its shape:\n%s", out)
		}
	})
}

// TestLiteralRoundTripsThroughPostgres sends hostile strings to the real server as printed
// literals, under both settings of standard_conforming_strings, and reads them back.
func TestLiteralRoundTripsThroughPostgres(t *testing.T) {
	t.Parallel()
	pool := testdb.Pool(t)
	ctx := context.Background()
	values := []string{"", "us", "o'clock", `a\b`, `\'`, `x'; DROP TABLE y; --`, "line\nbreak", `\\n`, "Zoë ✓", "$$x$$", `E'\x41'`}
	for _, scs := range []string{"on", "off"} {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "SET standard_conforming_strings = "+scs); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			lit, err := Literal(v)
			if err != nil {
				t.Fatal(err)
			}
			// pgx itself refuses the simple protocol with standard_conforming_strings=off, so
			// send the text as a DBA's psql would: raw, through pgconn.
			results, err := conn.Conn().PgConn().Exec(ctx, "SELECT "+lit).ReadAll()
			if err != nil || len(results) != 1 || len(results[0].Rows) != 1 {
				t.Fatalf("standard_conforming_strings=%s: SELECT %s: %v", scs, lit, err)
			}
			got := string(results[0].Rows[0][0])
			if got != v {
				t.Fatalf("standard_conforming_strings=%s: %q came back as %q", scs, v, got)
			}
		}
		_, _ = conn.Exec(ctx, "RESET standard_conforming_strings")
		conn.Release()
	}
}
