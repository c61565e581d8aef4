package enums

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/outboxctl/outboxctl/internal/bytesize"
)

// DefaultMaxSourceBytes caps the category.py LoadFile reads (--max-enums-bytes raises it):
// the real file is about 14 KB, so a file over 1 MiB is a mistake (--enums pointed at a log
// or a dump), refused having cost at most the cap.
const DefaultMaxSourceBytes int64 = 1 << 20

// TooLargeError is a category.py over its cap, refused before it was read whole.
type TooLargeError struct {
	Path        string
	Limit, Size int64
}

func (e *TooLargeError) Error() string {
	raise := e.Limit
	for raise < e.Size {
		raise *= 2
	}
	return fmt.Sprintf("reading enums %s: the file is larger than the %s cap on a category.py (Sentry's is about 14 KB): point --enums at category.py, or raise the cap with --max-enums-bytes %s",
		e.Path, bytesize.Format(e.Limit), bytesize.Format(raise))
}

// The patterns of category.py. They are compiled on the first parse (only --enums FILE and
// lint parse one), not at start-up: every command pays for package initialisation.
var (
	reClass      = lazyRE(`^class\s+(\w+)\s*\(\s*IntEnum\s*\)\s*:`)
	reMember     = lazyRE(`^\s+([A-Z][A-Z0-9_]*)\s*=\s*(\d+)\s*(?:#(.*))?$`)
	reScopeStart = lazyRE(`^\s+([A-Z][A-Z0-9_]*)\s*=\s*scope_categories\s*\(`)
	reScopeInt   = lazyRE(`^\s*scope_categories\s*\(\s*(\d+)\s*,`)
	reCatRef     = lazyRE(`OutboxCategory\.([A-Z][A-Z0-9_]*)`)
	reRetired    = lazyRE(`(?i)no longer in use|not in use|retired`)
)

func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// LoadFile parses a Sentry category.py (src/sentry/hybridcloud/outbox/category.py), refusing
// one over limit bytes (0: DefaultMaxSourceBytes): by its size when it has one, and by never
// reading more than limit+1 bytes when it does not say (a pipe) or grows meanwhile.
func LoadFile(path string, limit int64) (Source, error) {
	if limit <= 0 {
		limit = DefaultMaxSourceBytes
	}
	f, err := os.Open(path)
	if err != nil {
		return Source{}, fmt.Errorf("reading enums: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return Source{}, &TooLargeError{Path: path, Limit: limit, Size: st.Size()}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return Source{}, fmt.Errorf("reading enums %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return Source{}, &TooLargeError{Path: path, Limit: limit, Size: int64(len(data))}
	}
	return Parse(path, data)
}

// Parse reads the IntEnum members of OutboxCategory and the scope_categories(...)
// registrations of OutboxScope from the text of a category.py. It reads the file as text
// and runs none of it.
func Parse(origin string, data []byte) (Source, error) {
	src := Source{Origin: origin}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), max(len(data)+1, 64*1024)) // a line as long as the file
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return Source{}, fmt.Errorf("reading enums %s: %w", origin, err)
	}

	sawCategory, sawScope := false, false
	for i := 0; i < len(lines); i++ {
		m := reClass().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		end := classEnd(lines, i)
		switch m[1] {
		case "OutboxCategory":
			sawCategory = true
			cats, err := parseCategories(origin, lines, i+1, end)
			if err != nil {
				return Source{}, err
			}
			src.Categories = append(src.Categories, cats...)
		case "OutboxScope":
			sawScope = true
			scopes, err := parseScopes(origin, lines, i+1, end)
			if err != nil {
				return Source{}, err
			}
			src.Scopes = append(src.Scopes, scopes...)
		}
		i = end - 1
	}
	if !sawCategory || !sawScope {
		return Source{}, fmt.Errorf("%s: no `class OutboxCategory(IntEnum)` and `class OutboxScope(IntEnum)` found; "+
			"pass Sentry's src/sentry/hybridcloud/outbox/category.py", origin)
	}
	if len(src.Categories) == 0 {
		return Source{}, fmt.Errorf("%s: OutboxCategory has no `NAME = INTEGER` members", origin)
	}
	if len(src.Scopes) == 0 {
		return Source{}, fmt.Errorf("%s: OutboxScope has no members", origin)
	}
	return src, nil
}

// classEnd returns the index of the first line after the class body that starts at
// lines[start]: the next line with no indentation that is not blank or a comment.
func classEnd(lines []string, start int) int {
	for j := start + 1; j < len(lines); j++ {
		l := lines[j]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		if strings.HasPrefix(l, "#") {
			continue
		}
		return j
	}
	return len(lines)
}

func parseCategories(origin string, lines []string, from, to int) ([]CategoryDef, error) {
	var out []CategoryDef
	for j := from; j < to; j++ {
		m := reMember().FindStringSubmatch(lines[j])
		if m == nil {
			continue
		}
		v, err := enumInt(origin, j, m[1], m[2])
		if err != nil {
			return nil, err
		}
		out = append(out, CategoryDef{Name: m[1], Value: v, Retired: reRetired().MatchString(m[3]), Line: j + 1})
	}
	return out, nil
}

// enumInt reads a member's integer. The outbox columns are PostgreSQL integers, so a value
// beyond int32 is an error rather than clamped (a clamped scope would take the place of
// another) or dropped.
func enumInt(origin string, j int, name, digits string) (int, error) {
	v, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: %s = %s is out of range: the outbox columns hold integers up to %d", origin, j+1, name, clipDigits(digits), math.MaxInt32)
	}
	return int(v), nil
}

// clipDigits keeps an error about a huge integer one short line.
func clipDigits(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

func parseScopes(origin string, lines []string, from, to int) ([]ScopeDef, error) {
	var out []ScopeDef
	for j := from; j < to; j++ {
		line := lines[j]
		if m := reMember().FindStringSubmatch(line); m != nil {
			// A scope written as a plain integer has no categories of its own.
			v, err := enumInt(origin, j, m[1], m[2])
			if err != nil {
				return nil, err
			}
			out = append(out, ScopeDef{Name: m[1], Value: v, Line: j + 1,
				Retired: reRetired().MatchString(m[3]) || retiredByComment(lines, j)})
			continue
		}
		m := reScopeStart().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		// Gather the call up to its closing parenthesis; comments are dropped first so a
		// parenthesis in a comment does not end it early.
		var call strings.Builder
		depth, k := 0, j
		for ; k < to; k++ {
			text := stripComment(lines[k])
			if k == j {
				text = text[strings.Index(text, "scope_categories"):]
			}
			call.WriteString(text)
			call.WriteString("\n")
			depth += strings.Count(text, "(") - strings.Count(text, ")")
			if depth <= 0 {
				break
			}
		}
		if depth > 0 {
			return nil, fmt.Errorf("%s:%d: scope_categories( for %s is never closed", origin, j+1, m[1])
		}
		body := call.String()
		vm := reScopeInt().FindStringSubmatch(body)
		if vm == nil {
			return nil, fmt.Errorf("%s:%d: %s = scope_categories(...) does not start with an integer", origin, j+1, m[1])
		}
		v, err := enumInt(origin, j, m[1], vm[1])
		if err != nil {
			return nil, err
		}
		def := ScopeDef{Name: m[1], Value: v, Line: j + 1, Retired: retiredByComment(lines, j) || reRetired().MatchString(commentOf(line))}
		for _, ref := range reCatRef().FindAllStringSubmatch(body, -1) {
			def.Categories = append(def.Categories, ref[1])
		}
		out = append(out, def)
		j = k
	}
	return out, nil
}

// retiredByComment reports whether the comment lines right above lines[j] retire it
// ("# Webhook scope is no longer in use").
func retiredByComment(lines []string, j int) bool {
	for k := j - 1; k >= 0; k-- {
		t := strings.TrimSpace(lines[k])
		if !strings.HasPrefix(t, "#") {
			return false
		}
		if reRetired().MatchString(t) {
			return true
		}
	}
	return false
}

func stripComment(line string) string {
	if i := strings.Index(line, "#"); i >= 0 {
		return line[:i]
	}
	return line
}

func commentOf(line string) string {
	if i := strings.Index(line, "#"); i >= 0 {
		return line[i+1:]
	}
	return ""
}
