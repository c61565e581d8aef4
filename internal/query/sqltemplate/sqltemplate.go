// Package sqltemplate reads statements from SQL files and fills the parts of them a target
// decides. It is a leaf, so that every package holding SQL files (internal/query, and
// internal/query/session, which internal/db imports) parses them the same way.
package sqltemplate

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// The statements live in <noun>.sql files, one file per noun, so a DBA reads (and runs) the SQL
// as it is, not Go that assembles it. A file is a list of statements, each starting at a
// "-- name: <statement>" line; the comment lines right after it describe the statement for
// the reader of the file (the printed header comes from Go: it names the target and values).
//
// What the target decides is written as a comment, so the file stays valid SQL (the model is
// river's rivershared/sqlctemplate):
//
//   - /* TEMPLATE: name */word — an identifier the target decides (table, cell_column, …) or
//     one of a few keywords Go picks (ASC or DESC). The word after the marker is the default:
//     what the file runs with as it stands; Fill replaces marker and word with the value.
//   - /* IF: name */ … /* END: name */ — an optional fragment (a filter, the control silo's
//     cell column). As written it is included; Fill keeps it (without the markers) when Go
//     turns name on and removes it otherwise. A line left empty by a removed fragment goes,
//     and a removed fragment that began with WHERE hands its WHERE to the AND of the line below
//     ("     WHERE" and "       AND" have the same width, so the printed SQL lines up).
//   - /* TEMPLATE_BEGIN: name */…/* TEMPLATE_END: name */ — a region Go replaces whole with
//     text that itself came from the SQL files (the SELECT whose rows a printed DELETE names);
//     as written the region holds a stand-in that runs. A statement's region takes a Part
//     (FillRegions), which only the files' statements make: Fill refuses a region's value
//     given as a string, so SQL written in Go cannot reach a statement through a region. A
//     psql script's regions (FillScript) hold printed statements, whose SQL is the files'.
//   - /* EITHER: name */first/* OR: second */ — one of two forms (the control silo's cell
//     column or NULL, a capped or an exact count, DESC or ASC). As written the first runs and
//     the second is a comment (PostgreSQL nests block comments, so the second may hold markers
//     of its own); Fill keeps the first when Go turns name on and the second otherwise. An
//     IF fragment cannot say this: as written both forms would run, side by side.
//
// Values are never templated: they are @name placeholders, bound or printed by internal/query's Statement.
//
// A statement that is unknown, a TEMPLATE without a value, a value or fragment name the
// statement does not use, an unclosed fragment or any marker left after filling is an error:
// internal/query's golden tests render every statement, so such a bug never ships.

// Set is the statements and scripts of some SQL files, by name.
type Set struct {
	texts map[string]string
	// filled remembers Fill's results (fillKey → text), nfilled counts them.
	filled  sync.Map
	nfilled atomic.Int64
}

// Parse reads every file of fsys that matches one of patterns ("sql/*.sql").
func Parse(fsys fs.FS, patterns ...string) (*Set, error) {
	texts, err := parseSQLFiles(fsys, patterns...)
	if err != nil {
		return nil, err
	}
	return &Set{texts: texts}, nil
}

// Names are the statements of the set, scripts left out.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.texts))
	for n := range s.texts {
		if !strings.HasPrefix(n, scriptKey("")) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Text is statement name as written, templates and all.
func (s *Set) Text(name string) (string, bool) {
	t, ok := s.texts[name]
	return t, ok
}

var (
	nameLine   = regexp.MustCompile(`^-- name: ([a-z0-9-]+)\s*$`)
	scriptLine = regexp.MustCompile(`^-- script: ([a-z0-9-]+)\s*$`)
)

// scriptKey is where a "-- script:" is kept among the statements: a script is not a
// statement (Fill refuses it), and its comment lines are its text, printed as they are.
func scriptKey(name string) string { return "script:" + name }

// parseSQLFiles reads every file of fsys matching patterns into statement texts by name.
func parseSQLFiles(fsys fs.FS, patterns ...string) (map[string]string, error) {
	var paths []string
	for _, pat := range patterns {
		p, err := fs.Glob(fsys, pat)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p...)
	}
	out := map[string]string{}
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		if err := parseSQLFile(p, string(data), out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseSQLFile adds the statements of one file to out. Lines before the first name are the
// file's own comment; a statement's leading comment lines are its description, not its text.
func parseSQLFile(path, data string, out map[string]string) error {
	var name string
	var body []string
	inDoc := false
	flush := func() error {
		if name == "" {
			return nil
		}
		text := strings.TrimRight(strings.Join(body, "\n"), " \t\n;")
		if strings.TrimSpace(text) == "" {
			return fmt.Errorf("%s: statement %s is empty", path, name)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("%s: statement %s is defined twice", path, name)
		}
		out[name] = text
		return nil
	}
	for i, line := range strings.Split(data, "\n") {
		if m := nameLine.FindStringSubmatch(line); m != nil {
			if err := flush(); err != nil {
				return err
			}
			name, body, inDoc = m[1], nil, true
			continue
		}
		if m := scriptLine.FindStringSubmatch(line); m != nil {
			if err := flush(); err != nil {
				return err
			}
			name, body, inDoc = scriptKey(m[1]), nil, false
			continue
		}
		if strings.HasPrefix(line, "-- name:") {
			return fmt.Errorf("%s:%d: malformed name line %q", path, i+1, line)
		}
		if name == "" {
			continue
		}
		if inDoc && (strings.HasPrefix(line, "--") || strings.TrimSpace(line) == "") {
			continue
		}
		inDoc = false
		body = append(body, line)
	}
	return flush()
}

var (
	identMarker  = regexp.MustCompile(`/\* TEMPLATE: ([a-z_]+) \*/([A-Za-z_][A-Za-z0-9_]*)`)
	ifMarker     = regexp.MustCompile(`/\* IF: ([a-z_]+) \*/`)
	eitherMarker = regexp.MustCompile(`/\* EITHER: ([a-z_]+) \*/`)
	regionMarker = regexp.MustCompile(`(?s)/\* TEMPLATE_BEGIN: ([a-z_]+) \*/.*?/\* TEMPLATE_END: ([a-z_]+) \*/`)
	anyMarker    = regexp.MustCompile(`/\*\s*(TEMPLATE|TEMPLATE_BEGIN|TEMPLATE_END|IF|END|EITHER|OR)\b`)
)

// whereHandoff stands where a removed fragment took its WHERE, until the line below takes it.
const whereHandoff = "\x00WHERE"

// Fill is the SQL of statement name with idents' values in its TEMPLATE slots and only the
// fragments named in on kept.
//
// A filled statement is remembered (Fill is a pure function of its arguments): a drain fills
// the same few statements for every message, and filling cost more than binding them.
func (s *Set) Fill(name string, idents map[string]string, on ...string) (string, error) {
	return s.FillRegions(name, idents, nil, on...)
}

// FillRegions is Fill with regions' values: parts of the files' statements (see Part).
func (s *Set) FillRegions(name string, idents map[string]string, regions map[string]Part, on ...string) (string, error) {
	texts := make(map[string]string, len(regions))
	for k, p := range regions {
		texts[k] = p.text
	}
	key := fillKey(name, idents, on) + "\x00\x00" + fillKey("", texts, nil)
	if v, ok := s.filled.Load(key); ok {
		return v.(string), nil
	}
	text, ok := s.texts[name]
	if !ok {
		return "", fmt.Errorf("sql: no statement %q", name)
	}
	for k := range idents {
		if strings.Contains(text, "/* TEMPLATE_BEGIN: "+k+" */") {
			return "", fmt.Errorf("sql %s: region %s is given a string: a region holds a Part, SQL of the files", name, k)
		}
	}
	all := make(map[string]string, len(idents)+len(texts))
	for k, v := range idents {
		all[k] = v
	}
	for k, v := range texts {
		all[k] = v
	}
	out, err := fill(name, text, all, on)
	if err == nil && s.nfilled.Add(1) <= maxFilled {
		s.filled.Store(key, out)
	}
	return out, err
}

// maxFilled bounds the statements Fill remembers: a process fills a few dozen (one per
// statement, target and set of fragments), a long watch no more.
const maxFilled = 1024

// fillKey names one Fill: the statement, its identifiers and its fragments, in a canonical
// order (NUL separates: no identifier or fragment name holds one).
func fillKey(name string, idents map[string]string, on []string) string {
	keys := make([]string, 0, len(idents))
	for k := range idents {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00")
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(idents[k])
	}
	b.WriteString("\x00\x00")
	sorted := slices.Clone(on)
	sort.Strings(sorted)
	b.WriteString(strings.Join(sorted, "\x00"))
	return b.String()
}

// FillScript is the psql script name ("-- script:" in sql/*.psql) with its regions filled:
// its lines are kept as written, blank ones included, since they are what a DBA reads.
func (s *Set) FillScript(name string, idents map[string]string) (string, error) {
	text, ok := s.texts[scriptKey(name)]
	if !ok {
		return "", fmt.Errorf("sql: no script %q", name)
	}
	return fillText(name, text, idents, nil, false)
}

func fill(name, text string, idents map[string]string, on []string) (string, error) {
	return fillText(name, text, idents, on, true)
}

// fillText fills text; tidy drops the lines removed fragments left empty (a statement's
// lines), which a script's blank lines must not be.
func fillText(name, text string, idents map[string]string, on []string, tidy bool) (string, error) {
	keep := map[string]bool{}
	for _, n := range on {
		keep[n] = true
	}
	used := map[string]bool{}
	out, err := choices(name, text, keep, used)
	if err != nil {
		return "", err
	}
	out, err = fragments(name, out, keep, used)
	if err != nil {
		return "", err
	}
	for n := range keep {
		if !used[n] {
			return "", fmt.Errorf("sql %s: fragment %s is not in the statement", name, n)
		}
	}
	var missing []string
	usedIdent := map[string]bool{}
	// A region's value goes in last, after every check and line tidying: it is finished SQL
	// (with a --reason comment, maybe), not the file's.
	var regions []string
	var badRegion string
	out = regionMarker.ReplaceAllStringFunc(out, func(m string) string {
		sub := regionMarker.FindStringSubmatch(m)
		if sub[1] != sub[2] {
			badRegion = sub[1]
			return m
		}
		v, ok := idents[sub[1]]
		if !ok {
			missing = append(missing, sub[1])
			return m
		}
		usedIdent[sub[1]] = true
		regions = append(regions, v)
		return regionHole
	})
	if badRegion != "" {
		return "", fmt.Errorf("sql %s: region %s ends with another region's TEMPLATE_END", name, badRegion)
	}
	out = identMarker.ReplaceAllStringFunc(out, func(m string) string {
		slot := identMarker.FindStringSubmatch(m)[1]
		v, ok := idents[slot]
		if !ok {
			missing = append(missing, slot)
			return m
		}
		usedIdent[slot] = true
		return v
	})
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("sql %s: no value for template %s", name, strings.Join(missing, ", "))
	}
	for slot := range idents {
		if !usedIdent[slot] && !strings.Contains(text, "/* TEMPLATE: "+slot+" */") && !strings.Contains(text, "/* TEMPLATE_BEGIN: "+slot+" */") {
			return "", fmt.Errorf("sql %s: value for %s is not used by the statement", name, slot)
		}
	}
	if m := anyMarker.FindString(out); m != "" {
		return "", fmt.Errorf("sql %s: template marker %q left after filling (a typo, or a slot without its default word)", name, m)
	}
	if tidy {
		out = handOffWhere(out)
	}
	for _, r := range regions {
		out = strings.Replace(out, regionHole, r, 1)
	}
	return out, nil
}

// regionHole stands where a region's value goes once the statement is otherwise filled.
const regionHole = "\x00REGION"

// choices resolves every /* EITHER */ … /* OR: … */ of text: the first form when its name is
// in keep, the second otherwise. The second form may hold choices of its own.
func choices(name, text string, keep, used map[string]bool) (string, error) {
	var b strings.Builder
	for {
		loc := eitherMarker.FindStringSubmatchIndex(text)
		if loc == nil {
			b.WriteString(text)
			return b.String(), nil
		}
		choice := text[loc[2]:loc[3]]
		used[choice] = true
		rest := text[loc[1]:]
		or := strings.Index(rest, "/* OR: ")
		if or < 0 {
			return "", fmt.Errorf("sql %s: choice %s has no /* OR: … */", name, choice)
		}
		first := rest[:or]
		if eitherMarker.MatchString(first) {
			return "", fmt.Errorf("sql %s: choice %s nests a choice in its first form (put it in the second)", name, choice)
		}
		second, after, err := orForm(rest[or+len("/* OR: "):])
		if err != nil {
			return "", fmt.Errorf("sql %s: choice %s: %w", name, choice, err)
		}
		b.WriteString(text[:loc[0]])
		if keep[choice] {
			b.WriteString(first)
			markUsed(second, used)
		} else {
			markUsed(first, used)
			kept, err := choices(name, second, keep, used)
			if err != nil {
				return "", err
			}
			b.WriteString(kept)
		}
		text = after
	}
}

// markUsed records the fragment and choice names of a form that was left out: they are the
// statement's names all the same, so Go may turn them on.
func markUsed(form string, used map[string]bool) {
	for _, re := range []*regexp.Regexp{ifMarker, eitherMarker} {
		for _, m := range re.FindAllStringSubmatch(form, -1) {
			used[m[1]] = true
		}
	}
}

// orForm splits the text after "/* OR: " into the second form and what follows the comment:
// the comment ends at the "*/" that closes it, past the comments nested in it, and the space
// before that "*/" is the comment's, not the form's.
func orForm(text string) (form, after string, err error) {
	depth := 1
	for i := 0; i+1 < len(text); i++ {
		switch text[i : i+2] {
		case "/*":
			depth++
			i++
		case "*/":
			depth--
			if depth == 0 {
				return strings.TrimSuffix(text[:i], " "), text[i+2:], nil
			}
			i++
		}
	}
	return "", "", fmt.Errorf("/* OR: is never closed")
}

// fragments keeps or removes every /* IF */ … /* END */ region of text (regions may nest),
// recording in used the names it saw.
func fragments(name, text string, keep, used map[string]bool) (string, error) {
	var b strings.Builder
	for {
		loc := ifMarker.FindStringSubmatchIndex(text)
		if loc == nil {
			b.WriteString(text)
			return b.String(), nil
		}
		frag := text[loc[2]:loc[3]]
		used[frag] = true
		end := "/* END: " + frag + " */"
		rest := text[loc[1]:]
		// The region ends at its own END, past any nested region of the same name.
		depth, j := 0, 0
		for {
			k := strings.Index(rest[j:], end)
			if k < 0 {
				return "", fmt.Errorf("sql %s: fragment %s has no %s", name, frag, end)
			}
			open := strings.Index(rest[j:], "/* IF: "+frag+" */")
			if open >= 0 && open < k {
				depth++
				j += open + 1
				continue
			}
			if depth > 0 {
				depth--
				j += k + len(end)
				continue
			}
			j += k
			break
		}
		inner, after := rest[:j], rest[j+len(end):]
		b.WriteString(text[:loc[0]])
		if keep[frag] {
			kept, err := fragments(name, inner, keep, used)
			if err != nil {
				return "", err
			}
			b.WriteString(kept)
		} else {
			// Names inside a removed region still count as used: the statement has them.
			markUsed(inner, used)
			if strings.HasPrefix(inner, "WHERE ") {
				b.WriteString(whereHandoff)
			}
		}
		text = after
	}
}

// handOffWhere drops the lines removed fragments left empty and gives each removed WHERE to
// the AND right below it, at the same column; with no AND below, the WHERE goes.
func handOffWhere(text string) string {
	lines := strings.Split(text, "\n")
	out := lines[:0]
	pending := -1 // the indent of a WHERE waiting for its AND
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" {
			continue
		}
		if trimmed == whereHandoff {
			if pending < 0 {
				pending = len(l) - len(strings.TrimLeft(l, " "))
			}
			continue
		}
		if pending >= 0 {
			and := strings.Repeat(" ", pending) + "  AND "
			if strings.HasPrefix(l, and) {
				l = strings.Repeat(" ", pending) + "WHERE " + l[len(and):]
			}
			pending = -1
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
