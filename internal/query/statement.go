// Package query holds every byte outboxctl sends to PostgreSQL. Each diagnostic question is
// one Statement: the same value prints as pasteable, annotated SQL (--print-sql) and runs with
// bind parameters, so what a DBA reads is what outboxctl executes.
package query

import (
	"fmt"
	"strings"
)

// Arg is a value bound to an @name placeholder. Note, when set, is printed as a comment at
// the end of the line the placeholder stands on (the enum name of an integer, say).
type Arg struct {
	Value any
	Note  string
}

// Args maps placeholder names to values.
type Args map[string]Arg

// Statement is one SQL statement exactly as outboxctl prints and executes it.
type Statement struct {
	// Name identifies the statement in headers, errors and golden files ("stuck-shards").
	Name string
	// Doc is the comment header: what the query answers and how to read the result.
	Doc []string
	// Text is the SQL with @name placeholders. Identifiers (schema, table) are already in it,
	// quoted by Ident; values never are.
	Text string
	Args Args
	// err is why the text could not be taken from the SQL files (see sqlStatement); Render
	// and Bind return it.
	err error
}

// token is a piece of a statement's text: literal SQL, or a placeholder.
type token struct {
	text  string
	param string
}

// lex splits text into SQL and @name placeholders. It skips quoted strings, quoted
// identifiers and comments, so an "@" inside them is left alone, and it does not mistake
// PostgreSQL's @ operator followed by a space for a placeholder.
func lex(text string) []token {
	var out []token
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, token{text: cur.String()})
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
			j := strings.Index(text[i+2:], "*/")
			end := len(text)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			cur.WriteString(text[i:end])
			i = end
		case c == '@' && i+1 < len(text) && isIdentStart(text[i+1]) && (i == 0 || !isIdentChar(text[i-1])):
			j := i + 1
			for j < len(text) && isIdentChar(text[j]) {
				j++
			}
			flush()
			out = append(out, token{param: text[i+1 : j]})
			i = j
		default:
			cur.WriteByte(c)
			i++
		}
	}
	flush()
	return out
}

func isIdentStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || (c >= '0' && c <= '9') }

// check enforces what pgx.StrictNamedArgs enforces: every placeholder has a value and every
// value has a placeholder. A mismatch is a bug in outboxctl, caught by the golden tests.
func (s Statement) check(toks []token) error {
	if s.err != nil {
		return s.err
	}
	used := map[string]bool{}
	for _, t := range toks {
		if t.param == "" {
			continue
		}
		if _, ok := s.Args[t.param]; !ok {
			return fmt.Errorf("query %s: placeholder @%s has no value", s.Name, t.param)
		}
		used[t.param] = true
	}
	for name := range s.Args {
		if !used[name] {
			return fmt.Errorf("query %s: value @%s is not used by the SQL", s.Name, name)
		}
	}
	return nil
}

// Bind returns the executed form: the SQL with $1, $2, … and the values in that order.
func (s Statement) Bind() (string, []any, error) {
	toks := lex(s.Text)
	if err := s.check(toks); err != nil {
		return "", nil, err
	}
	var b strings.Builder
	pos := map[string]int{}
	var args []any
	for _, t := range toks {
		if t.param == "" {
			b.WriteString(t.text)
			continue
		}
		n, ok := pos[t.param]
		if !ok {
			args = append(args, s.Args[t.param].Value)
			n = len(args)
			pos[t.param] = n
		}
		fmt.Fprintf(&b, "$%d", n)
	}
	return b.String(), args, nil
}

// Render returns the printed form: a comment header, then the SQL with every value written
// as a literal and its note, if any, as a comment at the end of its line, then ";".
func (s Statement) Render() (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "-- outboxctl: %s\n", comment(s.Name))
	for _, d := range s.Doc {
		if d == "" {
			b.WriteString("--\n")
			continue
		}
		fmt.Fprintf(&b, "-- %s\n", comment(d))
	}
	toks := lex(s.Text)
	if err := s.check(toks); err != nil {
		return "", err
	}
	// Render line by line so that each line's notes follow the end of that line: the
	// line ends outside any literal, because literals are complete tokens.
	type outLine struct {
		text    string
		comment bool // ends in a "-- note", so nothing may follow it on the line
	}
	var lines []outLine
	var line strings.Builder
	var notes []string
	endLine := func() {
		text := strings.TrimRight(line.String(), " \t")
		l := outLine{text: text}
		if len(notes) > 0 {
			l.text += "  -- " + comment(strings.Join(dedupe(notes), ", "))
			l.comment = true
		}
		lines = append(lines, l)
		line.Reset()
		notes = notes[:0]
	}
	for _, t := range toks {
		if t.param != "" {
			arg := s.Args[t.param]
			lit, err := Literal(arg.Value)
			if err != nil {
				return "", fmt.Errorf("query %s: @%s: %w", s.Name, t.param, err)
			}
			line.WriteString(lit)
			if arg.Note != "" {
				notes = append(notes, arg.Note)
			}
			continue
		}
		for i, p := range strings.Split(t.text, "\n") {
			if i > 0 {
				endLine()
			}
			line.WriteString(p)
		}
	}
	endLine()
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1].text) == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0].text) == "" {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return "", fmt.Errorf("query %s: empty statement", s.Name)
	}
	last := &lines[len(lines)-1]
	switch {
	case last.comment:
		lines = append(lines, outLine{text: ";"})
	default:
		last.text = strings.TrimRight(last.text, ";") + ";"
	}
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteString("\n")
	}
	return b.String(), nil
}

func dedupe(items []string) []string {
	seen := map[string]bool{}
	out := items[:0:0]
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// Script is the ordered statements one command runs.
type Script []Statement

// Render prints every statement, separated by a blank line.
func (sc Script) Render() (string, error) {
	parts := make([]string, 0, len(sc))
	for _, s := range sc {
		r, err := s.Render()
		if err != nil {
			return "", err
		}
		parts = append(parts, r)
	}
	return strings.Join(parts, "\n"), nil
}
