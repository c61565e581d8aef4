package query

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Literal renders v as a PostgreSQL literal that means the same value whatever the session's
// standard_conforming_strings setting: integers as digits, strings single-quoted with quotes
// doubled, and strings holding a backslash or a control character as escape-string literals
// (E'...', backslashes doubled, control characters as \n, \xHH or \uXXXX escapes), which read
// the same under either setting and never put a raw control byte in printed SQL. A value PostgreSQL text cannot hold (a NUL
// byte, invalid UTF-8) is refused, never altered. Arrays carry no cast: the SQL around the
// placeholder casts (@ids::bigint[]), which types the bound parameter the same way.
func Literal(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case int:
		return strconv.Itoa(x), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	case string:
		return quoteString(x)
	case time.Time:
		return "'" + x.UTC().Format("2006-01-02 15:04:05.999999Z07:00") + "'::timestamptz", nil
	case []int64:
		parts := make([]string, len(x))
		for i, n := range x {
			parts[i] = strconv.FormatInt(n, 10)
		}
		return "ARRAY[" + strings.Join(parts, ", ") + "]", nil
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			q, err := quoteString(s)
			if err != nil {
				return "", err
			}
			parts[i] = q
		}
		return "ARRAY[" + strings.Join(parts, ", ") + "]", nil
	}
	return "", fmt.Errorf("query: no literal form for %T", v)
}

// ErrNotText is returned for strings PostgreSQL cannot store as text.
var ErrNotText = errors.New("value cannot be a PostgreSQL text literal")

func quoteString(s string) (string, error) {
	if err := checkText(s); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	writeString(&b, s)
	return b.String(), nil
}

// checkText refuses a string PostgreSQL text cannot hold: the check writeString relies on.
func checkText(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: it contains a NUL byte", ErrNotText)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: it is not valid UTF-8", ErrNotText)
	}
	return nil
}

// writeString writes s, which checkText accepted, as a literal: straight to w, in runs of
// s, so a payload of hundreds of MB is never copied to be printed (restore --print-sql).
func writeString(w io.StringWriter, s string) {
	if !strings.Contains(s, `\`) && strings.IndexFunc(s, textsafe.IsControl) < 0 {
		_, _ = w.WriteString("'")
		for i := strings.IndexByte(s, '\''); i >= 0; i = strings.IndexByte(s, '\'') {
			_, _ = w.WriteString(s[:i+1])
			_, _ = w.WriteString("'")
			s = s[i+1:]
		}
		_, _ = w.WriteString(s)
		_, _ = w.WriteString("'")
		return
	}
	// An escape-string literal can spell a control character as \xHH or \uXXXX, so the
	// printed SQL stays on its lines and no raw control byte reaches a terminal or an editor.
	_, _ = w.WriteString("E'")
	start := 0
	for i, r := range s {
		var esc string
		switch {
		case r == '\'':
			esc = "''"
		case r == '\\':
			esc = `\\`
		case escapeNames[r] != "":
			esc = escapeNames[r]
		case r < 0x80 && textsafe.IsControl(r):
			esc = fmt.Sprintf(`\x%02x`, r)
		case textsafe.IsControl(r):
			esc = fmt.Sprintf(`\u%04x`, r)
		default:
			continue
		}
		_, _ = w.WriteString(s[start:i])
		_, _ = w.WriteString(esc)
		start = i + utf8.RuneLen(r)
	}
	_, _ = w.WriteString(s[start:])
	_, _ = w.WriteString("'")
}

// escapeNames are the escape-string spellings a reader knows by sight.
var escapeNames = map[rune]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`} //nolint:gochecknoglobals // immutable table

// simpleIdent says whether name is [a-z_][a-z0-9_]*: a name PostgreSQL folds to itself.
// (A loop, not a regexp: Ident runs for every name of every statement, and a package-level
// regexp is compiled by every command at start-up.)
func simpleIdent(name string) bool {
	for i, r := range name {
		if r != '_' && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return name != ""
}

// keywords holds every PostgreSQL key word that is not unreserved (pg_get_keywords() with
// catcode R, T or C in PostgreSQL 15, plus those later versions added): quote_ident quotes
// exactly these, because some position in the grammar refuses each of them bare.
var keywords = func() map[string]bool { //nolint:gochecknoglobals // immutable table
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric
		authorization between bigint binary bit boolean both case cast char character check
		coalesce collate collation column concurrently constraint create cross current_catalog
		current_date current_role current_schema current_time current_timestamp current_user dec
		decimal default deferrable desc distinct do else end except exists extract false fetch
		float for foreign freeze from full grant greatest group grouping having ilike in initially
		inner inout int integer intersect interval into is isnull join lateral leading least left
		like limit localtime localtimestamp national natural nchar none normalize not notnull null
		nullif numeric offset on only or order out outer overlaps overlay placing position
		precision primary real references returning right row select session_user setof similar
		smallint some substring symmetric table tablesample then time timestamp to trailing treat
		trim true union unique user using values varchar variadic verbose when where window with
		xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot
		xmlserialize xmltable
		system_user json json_array json_arrayagg json_exists json_object json_objectagg
		json_query json_scalar json_serialize json_table json_value merge_action`) {
		m[w] = true
	}
	return m
}()

// Ident quotes an identifier only when it needs it, so the common case reads like the guide's
// SQL (sentry_regionoutbox) while any other name is still exact ("Outbox", "my-schema"). A
// name holding a control character is written as a Unicode-escape identifier (U&"a\000ab"),
// so printed SQL never carries the raw byte; ValidateIdent refuses such names from flags.
func Ident(name string) string {
	if simpleIdent(name) && !keywords[name] {
		return name
	}
	if strings.IndexFunc(name, textsafe.IsControl) < 0 {
		return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
	}
	var b strings.Builder
	b.WriteString(`U&"`)
	for _, r := range name {
		switch {
		case r == '"':
			b.WriteString(`""`)
		case r == '\\':
			b.WriteString(`\\`)
		case textsafe.IsControl(r):
			fmt.Fprintf(&b, `\%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ValidateIdent checks a name given on the command line (--table, --schema) before it is used.
func ValidateIdent(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty", kind)
	case len(name) > 63:
		return fmt.Errorf("%s name %q is longer than PostgreSQL's 63-byte limit", kind, name)
	case strings.IndexByte(name, 0) >= 0 || !utf8.ValidString(name):
		return fmt.Errorf("%s name %q is not valid text", kind, name)
	case strings.IndexFunc(name, textsafe.IsControl) >= 0:
		return fmt.Errorf("%s name %q contains a control character", kind, name)
	}
	return nil
}

// comment makes s safe to place after "-- ": PostgreSQL and psql end a line comment at a
// newline or carriage return, which would turn the rest into SQL, so every control
// character (and invalid UTF-8) becomes a space; that also keeps the printed line free of
// raw control bytes.
func comment(s string) string {
	var b strings.Builder
	for _, r := range s {
		if textsafe.IsControl(r) || r == utf8.RuneError {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Why is who changes rows and why: a mutation's command and its --reason. Every mutation
// statement takes one, so the comment is part of the statement, printed and executed alike.
type Why struct{ Command, Reason string }

// Mark puts why's comment before s's text; a zero Why leaves s alone.
func (w Why) Mark(s Statement) Statement {
	if w != (Why{}) {
		c := ReasonComment(w.Command, w.Reason)
		s.Text = c + s.Text
		// The part follows (a marked statement may fill a region: bulk-count's rows); a
		// comment ReasonComment made is always one block comment.
		s.part, _ = s.part.Commented(c)
	}
	return s
}

// ReasonComment renders --reason as a block comment that shows in pg_stat_activity and the
// server log: "/* outboxctl COMMAND: REASON */ ". The reason is untrusted (incident titles
// pasted into runbooks), so the body is built to be provably unable to leave the comment:
// see blockCommentBody.
func ReasonComment(command, reason string) string {
	c, r := blockCommentBody(command), blockCommentBody(reason)
	if strings.TrimSpace(r) == "" {
		return "/* outboxctl " + c + " */ "
	}
	return "/* outboxctl " + c + ": " + r + " */ "
}

// blockCommentBody makes s safe between "/* " and " */". PostgreSQL (and psql's lexer)
// end a block comment at "*/" and nest one at "/*", so the body must contain neither.
// One left-to-right pass writes a space between a '/' and a '*' (in either order) that
// would otherwise touch; since the body is framed by spaces, no pair forms at its ends
// either. Control characters and invalid UTF-8 become spaces, as in a line comment.
func blockCommentBody(s string) string {
	var b strings.Builder
	prev := ' '
	for _, r := range comment(s) {
		if (prev == '/' && r == '*') || (prev == '*' && r == '/') {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}
