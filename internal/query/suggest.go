package query

import (
	"fmt"
	"strings"
)

// The doctor's next steps, from sql/doctor.sql: statements a finding suggests, printed on
// one line for a DBA to run by hand.

// NextVacuum vacuums a table whose dead tuples autovacuum has not removed.
func NextVacuum(schema, table string) Statement {
	return sqlStatement("next-vacuum", nil, map[string]string{"table": qualified(schema, table)}, nil)
}

// NextResetAutovacuum turns a table's autovacuum back on.
func NextResetAutovacuum(schema, table string) Statement {
	return sqlStatement("next-reset-autovacuum", nil, map[string]string{"table": qualified(schema, table)}, nil)
}

// NextEnableAutovacuum turns autovacuum back on server-wide.
func NextEnableAutovacuum() Script {
	return Script{sqlStatement("next-enable-autovacuum", nil, nil, nil), sqlStatement("next-reload-conf", nil, nil, nil)}
}

// NextTerminateBackend ends session pid (its transaction rolls back).
func NextTerminateBackend(pid int64) Statement {
	return sqlStatement("next-terminate-backend", nil, nil, Args{"pid": {Value: pid}})
}

// NextRollbackPrepared rolls back the prepared transaction gid.
func NextRollbackPrepared(gid string) Statement {
	return sqlStatement("next-rollback-prepared", nil, nil, Args{"gid": {Value: gid}})
}

// NextDropReplicationSlot drops replication slot name.
func NextDropReplicationSlot(name string) Statement {
	return sqlStatement("next-drop-replication-slot", nil, nil, Args{"slot": {Value: name}})
}

// Suggestion is a finding's next step: sc on one line, each statement followed by ";", its
// values written as literals that stay on one line (OneLineLiteral), then "  -- remark"
// when there is one. A statement that cannot be filled (a bug the doctor's tests catch)
// says so in the text rather than suggest something else.
func Suggestion(remark string, sc ...Statement) string {
	parts := make([]string, 0, len(sc))
	for _, st := range sc {
		text, err := st.oneLine()
		if err != nil {
			return fmt.Sprintf("(no next step: %v)", err)
		}
		parts = append(parts, text+";")
	}
	out := strings.Join(parts, " ")
	if remark != "" {
		out += "  -- " + comment(remark)
	}
	return out
}

// oneLine is the statement's text with every value written as a one-line literal.
func (s Statement) oneLine() (string, error) {
	toks := lex(s.Text)
	if err := s.check(toks); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range toks {
		if t.param == "" {
			b.WriteString(t.text)
			continue
		}
		v := s.Args[t.param].Value
		if str, ok := v.(string); ok {
			b.WriteString(OneLineLiteral(str))
			continue
		}
		lit, err := Literal(v)
		if err != nil {
			return "", fmt.Errorf("query %s: @%s: %w", s.Name, t.param, err)
		}
		b.WriteString(lit)
	}
	return b.String(), nil
}

// OneLineLiteral is s as a SQL string literal that is always one line: control characters
// are written as escapes of an E” literal, which reads the same under either
// standard_conforming_strings setting.
func OneLineLiteral(s string) string {
	hasCtl := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }) >= 0
	if !hasCtl {
		if lit, err := Literal(s); err == nil {
			return lit
		}
	}
	var b strings.Builder
	b.WriteString("E'")
	for _, r := range s {
		switch {
		case r == '\'':
			b.WriteString("''")
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}
