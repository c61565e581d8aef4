package query

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Literal renders v as a PostgreSQL literal that means the same value whatever the session's
// standard_conforming_strings setting: integers as digits, strings single-quoted with quotes
// doubled, and strings holding a backslash as escape-string literals (E'...') with
// backslashes doubled too, which read the same under either setting. A value PostgreSQL text cannot hold (a NUL
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
	if strings.IndexByte(s, 0) >= 0 {
		return "", fmt.Errorf("%w: it contains a NUL byte", ErrNotText)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: it is not valid UTF-8", ErrNotText)
	}
	body := strings.ReplaceAll(s, "'", "''")
	if strings.Contains(s, `\`) {
		return "E'" + strings.ReplaceAll(body, `\`, `\\`) + "'", nil
	}
	return "'" + body + "'", nil
}

var simpleIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// reserved holds the PostgreSQL reserved key words an outbox table or schema could plausibly
// be called; anything in it is quoted even though it is otherwise a simple name.
var reserved = map[string]bool{ //nolint:gochecknoglobals // immutable table
	"all": true, "analyse": true, "analyze": true, "and": true, "any": true, "array": true, "as": true,
	"asc": true, "both": true, "case": true, "cast": true, "check": true, "collate": true, "column": true,
	"constraint": true, "create": true, "default": true, "desc": true, "distinct": true, "do": true,
	"else": true, "end": true, "except": true, "false": true, "for": true, "foreign": true, "from": true,
	"grant": true, "group": true, "having": true, "in": true, "into": true, "limit": true, "not": true,
	"null": true, "offset": true, "on": true, "only": true, "or": true, "order": true, "primary": true,
	"references": true, "select": true, "table": true, "then": true, "to": true, "true": true,
	"union": true, "unique": true, "user": true, "using": true, "when": true, "where": true, "with": true,
}

// Ident quotes an identifier only when it needs it, so the common case reads like the guide's
// SQL (sentry_regionoutbox) while any other name is still exact ("Outbox", "my-schema").
func Ident(name string) string {
	if simpleIdent.MatchString(name) && !reserved[name] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
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
	}
	return nil
}

// comment makes s safe to place after "-- ": control characters (a newline would end the
// comment and turn the rest into SQL) become spaces.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
