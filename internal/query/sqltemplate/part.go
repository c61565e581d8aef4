package sqltemplate

import (
	"fmt"
	"regexp"
	"strings"
)

// Part is SQL a region may hold: a statement of the files filled (Set.Part), the same with
// its placeholders renamed (Rename), or parts put together with nothing but whitespace and
// commas between them (Sep, Concat, Join). Its text cannot be set any other way (the field
// is unexported), so a region never holds SQL written in Go: Fill refuses a region's value
// given as a plain string.
type Part struct{ text string }

// String is the part's SQL.
func (p Part) String() string { return p.text }

// Part is statement name filled (Fill's), as a part for another statement's region.
func (s *Set) Part(name string, idents map[string]string, regions map[string]Part, on ...string) (Part, error) {
	text, err := s.FillRegions(name, idents, regions, on...)
	return Part{text: text}, err
}

// glue is all the text Go may put between parts.
var glue = regexp.MustCompile(`^[\s,]*$`)

// Sep is the glue between parts: whitespace and commas only. Anything else is SQL, which
// belongs in the files; Sep panics on it, as on any other programming error.
func Sep(s string) Part {
	if !glue.MatchString(s) {
		panic(fmt.Sprintf("sqltemplate.Sep(%q): only whitespace and commas go between parts; SQL belongs in the files", s))
	}
	return Part{text: s}
}

// Concat is the parts one after the other.
func Concat(parts ...Part) Part {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.text)
	}
	return Part{text: b.String()}
}

// Join is the parts with sep (Sep's glue) between them.
func Join(sep string, parts []Part) Part {
	g := Sep(sep)
	out := make([]Part, 0, 2*len(parts))
	for i, p := range parts {
		if i > 0 {
			out = append(out, g)
		}
		out = append(out, p)
	}
	return Concat(out...)
}

// paramName is what a placeholder may be renamed to.
var paramName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// Rename is p with each @name placeholder renamed to rename(name) (a branch's own values:
// @t becomes @t0): the quoted strings, quoted identifiers and comments of p are left alone,
// as internal/query's placeholders are found.
func (p Part) Rename(rename func(string) string) (Part, error) {
	var b strings.Builder
	var err error
	Split(p.text, func(sql, param string) {
		if param == "" {
			b.WriteString(sql)
			return
		}
		n := rename(param)
		if !paramName.MatchString(n) && err == nil {
			err = fmt.Errorf("sqltemplate: @%s renamed to %q, not a placeholder name", param, n)
		}
		b.WriteString("@" + n)
	})
	if err != nil {
		return Part{}, err
	}
	return Part{text: b.String()}, nil
}

// Split calls emit with text's pieces in order: a run of SQL (param "") or one @name
// placeholder (sql ""). It skips quoted strings, quoted identifiers and comments, so an "@"
// inside them is left alone, and it does not mistake PostgreSQL's @ operator followed by a
// space for a placeholder. It is the one scanner of placeholders: internal/query's lexer
// and Rename both use it.
func Split(text string, emit func(sql, param string)) {
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			emit(cur.String(), "")
			cur.Reset()
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(text) {
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(text))
			cur.WriteString(text[i:end])
			i = end
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = len(text) - i
			}
			cur.WriteString(text[i : i+j])
			i += j
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := commentEnd(text, i)
			cur.WriteString(text[i:end])
			i = end
		case c == '@' && i+1 < len(text) && identStart(text[i+1]) && (i == 0 || !identChar(text[i-1])):
			j := i + 1
			for j < len(text) && identChar(text[j]) {
				j++
			}
			flush()
			emit("", text[i+1:j])
			i = j
		default:
			cur.WriteByte(c)
			i++
		}
	}
	flush()
}

// commentEnd is where the block comment opening at text[i] ends (PostgreSQL nests them).
func commentEnd(text string, i int) int {
	depth := 0
	for j := i; j+1 < len(text); j++ {
		switch {
		case text[j] == '/' && text[j+1] == '*':
			depth++
			j++
		case text[j] == '*' && text[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(text)
}

func identStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') }
func identChar(c byte) bool  { return identStart(c) || (c >= '0' && c <= '9') }

// Commented is p after comment, a block comment and a space ("/* outboxctl skip: … */ ",
// what a --reason leaves in pg_stat_activity): a comment runs nothing, so the part stays
// the files' SQL. A comment that is not one block comment (another "/*" or "*/" in it) is
// refused.
func (p Part) Commented(comment string) (Part, error) {
	body, ok := strings.CutPrefix(comment, "/* ")
	if ok {
		body, ok = strings.CutSuffix(body, " */ ")
	}
	if !ok || strings.Contains(body, "/*") || strings.Contains(body, "*/") {
		return Part{}, fmt.Errorf("sqltemplate: %q is not one block comment", comment)
	}
	return Part{text: comment + p.text}, nil
}
