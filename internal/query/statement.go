// Package query holds every byte outboxctl sends to PostgreSQL. Each diagnostic question is
// one Statement: the same value prints as pasteable, annotated SQL (--print-sql) and runs with
// bind parameters, so what a DBA reads is what outboxctl executes.
package query

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
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
	// part is Text as the files' statement gave it, for another statement's region
	// (SelectedShards' SELECT in a listing's): a region takes nothing else.
	part sqltemplate.Part
}

// token is a piece of a statement's text: literal SQL, or a placeholder.
type token struct {
	text  string
	param string
}

// lex splits text into SQL and @name placeholders (sqltemplate.Split: the one scanner of
// placeholders, which Part.Rename uses too).
func lex(text string) []token {
	var out []token
	sqltemplate.Split(text, func(sql, param string) { out = append(out, token{text: sql, param: param}) })
	return out
}

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
//
// The bound text of a statement's SQL is remembered (a drain binds the same few texts for
// every message): the placeholders are checked against the values on every call.
func (s Statement) Bind() (string, []any, error) {
	if s.err != nil {
		return "", nil, s.err
	}
	b, ok := boundTexts.Load(s.Text)
	if !ok {
		toks := lex(s.Text)
		if err := s.check(toks); err != nil {
			return "", nil, err
		}
		b = bindTokens(toks)
		if nbound.Add(1) <= maxBound {
			boundTexts.Store(s.Text, b)
		}
	}
	bt := b.(boundText)
	if len(bt.params) != len(s.Args) {
		return "", nil, s.check(lex(s.Text)) // says which value is not used
	}
	args := make([]any, len(bt.params))
	for i, name := range bt.params {
		a, ok := s.Args[name]
		if !ok {
			return "", nil, s.check(lex(s.Text))
		}
		args[i] = a.Value
	}
	return bt.sql, args, nil
}

// boundText is SQL with its @name placeholders numbered ($1, $2, …) and their names in that
// order.
type boundText struct {
	sql    string
	params []string
}

func bindTokens(toks []token) boundText {
	var b strings.Builder
	pos := map[string]int{}
	var params []string
	for _, t := range toks {
		if t.param == "" {
			b.WriteString(t.text)
			continue
		}
		n, ok := pos[t.param]
		if !ok {
			params = append(params, t.param)
			n = len(params)
			pos[t.param] = n
		}
		fmt.Fprintf(&b, "$%d", n)
	}
	return boundText{sql: b.String(), params: params}
}

// boundTexts remembers bindTokens by SQL text, at most maxBound of them (nbound counts):
// a process binds a few dozen texts; one whose text carries values (a --reason in a
// comment) adds one per value.
var (
	boundTexts sync.Map
	nbound     atomic.Int64
)

const maxBound = 1024

// Render returns the printed form: a comment header, then the SQL with every value written
// as a literal and its note, if any, as a comment at the end of its line, then ";".
func (s Statement) Render() (string, error) {
	var b strings.Builder
	if err := s.RenderTo(&b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// piece is part of a printed line: SQL text, or a string value written as a literal only
// when the line is, so that a value of hundreds of MB (a restored payload) is never copied
// to be printed.
type piece struct {
	text string
	str  *string
}

// outLine is a printed line; comment says it ends in a "-- note", so nothing may follow it.
type outLine struct {
	pieces  []piece
	comment bool
}

func (l outLine) blank() bool {
	for _, p := range l.pieces {
		if p.str != nil || strings.TrimSpace(p.text) != "" {
			return false
		}
	}
	return true
}

// trimRight cuts the characters of cutset from the end of the line's text; a literal never
// ends in them (it ends in a quote, a digit, a bracket or NULL), so the cut stops at one.
func trimRight(pieces []piece, cutset string) []piece {
	for len(pieces) > 0 && pieces[len(pieces)-1].str == nil {
		last := &pieces[len(pieces)-1]
		if last.text = strings.TrimRight(last.text, cutset); last.text != "" {
			break
		}
		pieces = pieces[:len(pieces)-1]
	}
	return pieces
}

// RenderTo writes the printed form (Render's) to w. Every value is checked before the first
// byte is written, so an error leaves w untouched; string values go to w without a copy.
func (s Statement) RenderTo(w io.Writer) error {
	toks := lex(s.Text)
	if err := s.check(toks); err != nil {
		return err
	}
	// Lines are built, then written: each line's notes follow the end of that line (the
	// line ends outside any literal, because literals are complete tokens), and the last
	// line is only known at the end.
	var lines []outLine
	var line []piece
	var notes []string
	endLine := func() {
		l := outLine{pieces: trimRight(line, " \t")}
		if len(notes) > 0 {
			l.pieces = append(l.pieces, piece{text: "  -- " + comment(strings.Join(dedupe(notes), ", "))})
			l.comment = true
		}
		lines = append(lines, l)
		line, notes = nil, notes[:0]
	}
	for _, t := range toks {
		if t.param != "" {
			arg := s.Args[t.param]
			p, err := literalPiece(arg.Value)
			if err != nil {
				return fmt.Errorf("query %s: @%s: %w", s.Name, t.param, err)
			}
			line = append(line, p)
			if arg.Note != "" {
				notes = append(notes, arg.Note)
			}
			continue
		}
		for i, p := range strings.Split(t.text, "\n") {
			if i > 0 {
				endLine()
			}
			line = append(line, piece{text: p})
		}
	}
	endLine()
	for len(lines) > 0 && lines[len(lines)-1].blank() {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && lines[0].blank() {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return fmt.Errorf("query %s: empty statement", s.Name)
	}
	last := &lines[len(lines)-1]
	switch {
	case last.comment:
		lines = append(lines, outLine{pieces: []piece{{text: ";"}}})
	default:
		last.pieces = append(trimRight(last.pieces, ";"), piece{text: ";"})
	}
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "-- outboxctl: %s\n", comment(s.Name))
	for _, d := range s.Doc {
		if d == "" {
			ew.WriteString("--\n")
			continue
		}
		fmt.Fprintf(ew, "-- %s\n", comment(d))
	}
	for _, l := range lines {
		for _, p := range l.pieces {
			if p.str != nil {
				writeString(ew, *p.str)
				continue
			}
			ew.WriteString(p.text)
		}
		ew.WriteString("\n")
	}
	return ew.err
}

// literalPiece checks v and returns it as a piece: a string as itself (written by
// writeString), any other value as its literal text.
func literalPiece(v any) (piece, error) {
	if str, ok := v.(string); ok {
		if err := checkText(str); err != nil {
			return piece{}, err
		}
		return piece{str: &str}, nil
	}
	lit, err := Literal(v)
	return piece{text: lit}, err
}

// errWriter keeps the first error of a run of writes, so they can be checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	var n int
	n, e.err = e.w.Write(p)
	return n, e.err
}

func (e *errWriter) WriteString(s string) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	var n int
	n, e.err = io.WriteString(e.w, s)
	return n, e.err
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

// RenderTo writes every statement, separated by a blank line, to w; a statement's error
// leaves the statements before it written.
func (sc Script) RenderTo(w io.Writer) error {
	for i, s := range sc {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := s.RenderTo(w); err != nil {
			return err
		}
	}
	return nil
}

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
