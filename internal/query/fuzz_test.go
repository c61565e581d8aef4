package query

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outboxctl/outboxctl/internal/testdb"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// unquote reads back a literal Literal produced, the way PostgreSQL's lexer does for the
// two forms it uses: plain quoted (a doubled quote for a quote) and E-quoted (also \\, \n,
// \xHH and \uXXXX escapes). It reports whether the literal is exactly one complete token.
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
			n, ok := unescape(body[i+1:], &b)
			if !ok {
				return "", false
			}
			i += n
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// unescape reads one escape after a backslash and returns how many bytes it used.
func unescape(rest string, b *strings.Builder) (int, bool) {
	named := map[byte]byte{'\\': '\\', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	switch {
	case rest == "":
		return 0, false
	case named[rest[0]] != 0:
		b.WriteByte(named[rest[0]])
		return 1, true
	case rest[0] == 'x' && len(rest) >= 3:
		n, err := strconv.ParseUint(rest[1:3], 16, 8)
		b.WriteByte(byte(n))
		return 3, err == nil
	case rest[0] == 'u' && len(rest) >= 5:
		n, err := strconv.ParseUint(rest[1:5], 16, 32)
		b.WriteRune(rune(n))
		return 5, err == nil
	}
	return 0, false
}

// hostile are the inputs of issue #10 and their relatives: comment closers and openers,
// psql meta-commands, line ends of every kind, NUL, invalid UTF-8 and terminal escapes.
var hostile = []string{ //nolint:gochecknoglobals // seed corpus
	"", "us", "INC-1234 organization outbox stuck", "o'clock", `a\b`, `\'`, `'; DROP TABLE y; --`,
	"/*/", "*/*", "*/", "/*", "/**/", "*/ SELECT 1; /*", "**//", "//**", "/*/*/*/", "*", "/",
	"/*/ WITH x AS (DELETE FROM public.canary WHERE id <= 10 RETURNING 1) UPDATE sentry_regionoutbox o --",
	"/*/ \\! echo PWNED > pwned.txt #", "\\! touch MARKER", "x\n\\! touch MARKER", "x\r\\! touch MARKER",
	"line\nbreak", "\r\n", "a\u2028b", "a\u2029b", "a\u0085b", "\x00", "a\x00b", "\xff", "\xc3(", "\x9b2J",
	"\x1b]0;pwned\x07", "\x1b[2K\x1b[1A", "\x1b[31mred", "\u202eevil", "-- c", "$$", "$tag$", "E'", ":foo", ":'foo'",
	"ü", "Zoë ✓", "@v", "\"quoted\"", `"`,
}

// FuzzBlockComment checks ReasonComment: whatever the reason, the comment holds neither "/*"
// nor "*/" nor a control byte, PostgreSQL's nesting comment lexer ends it exactly where it
// ends, and the real server, sent the comment inside a statement, runs that one statement.
func FuzzBlockComment(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ReasonComment("fuzz", s)
		body, okStart := strings.CutPrefix(c, "/* ")
		body, okEnd := strings.CutSuffix(body, " */ ")
		if !okStart || !okEnd {
			t.Fatalf("ReasonComment(%q) = %q: not framed by /* and */", s, c)
		}
		if strings.Contains(body, "/*") || strings.Contains(body, "*/") {
			t.Fatalf("ReasonComment(%q) = %q: the body opens or closes a comment", s, c)
		}
		assertPrintable(t, s, c)
		if end := pgCommentEnd(c); end != len(c)-2 {
			t.Fatalf("ReasonComment(%q) = %q: PostgreSQL would end the comment at byte %d", s, c, end)
		}
		assertOneStatement(t, "SELECT "+c+"1 AS v")
	})
}

// FuzzLineComment checks comment() where it is used: a statement's name and doc lines and a
// placeholder's note all go into "--" comments of one printed statement, which must still
// be that statement for the real server, on the lines it should have.
func FuzzLineComment(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := Statement{Name: s, Doc: []string{s}, Text: "SELECT @v AS v", Args: Args{"v": {Value: 1, Note: s}}}
		out, err := st.Render()
		if err != nil {
			t.Fatal(err)
		}
		want := 4 // name, doc, the statement with its note, ";"
		if s == "" {
			want = 3 // no note, so ";" ends the statement's line
		}
		if n := strings.Count(out, "\n"); n != want {
			t.Fatalf("%q: rendered statement has %d lines, want %d:\n%s", s, n, want, out)
		}
		assertPrintable(t, s, strings.ReplaceAll(out, "\n", " "))
		assertOneStatement(t, out)
	})
}

// FuzzIdent checks that Ident's output, used both as a column reference and as its
// definition, names exactly the given column on the real server and holds no control byte.
func FuzzIdent(f *testing.F) {
	for _, s := range append(hostile, "sentry_regionoutbox", "Outbox", "user", "position", "values", "a b") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || len(s) > 63 || strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return // ValidateIdent refuses these before Ident sees them
		}
		id := Ident(s)
		assertPrintable(t, s, id)
		res := execRaw(t, "SELECT "+id+" FROM (SELECT 1) AS t("+id+")")
		if len(res) != 1 || len(res[0].FieldDescriptions) != 1 || res[0].FieldDescriptions[0].Name != s {
			t.Fatalf("Ident(%q) = %s does not name that column", s, id)
		}
	})
}

// assertPrintable fails if rendered holds a control character or invalid UTF-8.
func assertPrintable(t *testing.T, in, rendered string) {
	t.Helper()
	if !utf8.ValidString(rendered) || strings.IndexFunc(rendered, textsafe.IsControl) >= 0 {
		t.Fatalf("%q rendered as %q, which holds a control character or invalid UTF-8", in, rendered)
	}
}

// pgCommentEnd returns the index of the '/' that ends the block comment s starts with, the
// way PostgreSQL's lexer reads it (comments nest), or -1 if it never ends.
func pgCommentEnd(s string) int {
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch s[i : i+2] {
		case "/*":
			depth++
			i++
		case "*/":
			depth--
			i++
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// execRaw sends sql as psql does (the simple protocol, several statements allowed) and
// returns every result.
func execRaw(t *testing.T, sql string) []*pgconn.Result {
	t.Helper()
	conn, err := testdb.Pool(t).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	res, err := conn.Conn().PgConn().Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%q: %v", sql, err)
	}
	return res
}

// assertOneStatement runs sql and requires exactly the statement "SELECT 1 AS v": one
// result, one column v, one row holding 1.
func assertOneStatement(t *testing.T, sql string) {
	t.Helper()
	res := execRaw(t, sql)
	if len(res) != 1 || len(res[0].FieldDescriptions) != 1 || res[0].FieldDescriptions[0].Name != "v" ||
		len(res[0].Rows) != 1 || string(res[0].Rows[0][0]) != "1" {
		t.Fatalf("%q did not run as SELECT 1 AS v alone (%d results)", sql, len(res))
	}
}

// FuzzLiteral checks that every string Literal accepts comes back unchanged from a lexer
// that follows PostgreSQL's rules, as one complete token, whatever quotes, backslashes,
// comment markers or newlines it holds. CI runs the seed corpus; `make fuzz` explores.
func FuzzLiteral(f *testing.F) {
	for _, s := range append(hostile, "x'; DROP TABLE y; --", "/* c */", "''", `\\`, `\x41`, `\u0041`) {
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
		assertPrintable(t, s, lit)
		res := execRaw(t, "SELECT "+lit)
		if len(res) != 1 || len(res[0].Rows) != 1 || string(res[0].Rows[0][0]) != s {
			t.Fatalf("SELECT %s did not return %q", lit, s)
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
