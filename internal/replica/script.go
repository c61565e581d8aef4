package replica

import "github.com/outboxctl/outboxctl/internal/query"

// Where is one side of a verify across two contexts: the context's name and its schema.
type Where struct{ Context, Schema string }

// Split are the cell's and the control silo's sides of a verify across two contexts.
type Split struct{ Cell, Control Where }

// sidesOf are where pair p's source and replica are read: in one database (sp nil) schema
// for both; across two contexts the source silo's side and the other one.
func (sp *Split) sidesOf(p Pair, schema string) (src, rep Where) {
	if sp == nil {
		return Where{Schema: schema}, Where{Schema: schema}
	}
	if p.SourceSilo == query.SiloControl {
		return sp.Control, sp.Cell
	}
	return sp.Cell, sp.Control
}

// VerifyScript is what verify would run for pairs, as --print-sql shows it: per pair, in
// one database (sp nil, schema) the columns of its tables then the set-based comparison;
// across two contexts (sp) each side's stream, headed by the context it runs on.
func VerifyScript(pairs []Pair, sp *Split, schema, cell string, ids []int64, limit int) query.Script {
	var script query.Script
	for _, p := range pairs {
		src, rep := sp.sidesOf(p, schema)
		s := Sides{SourceSchema: src.Schema, ReplicaSchema: rep.Schema}
		if sp == nil {
			script = append(script, ColumnsStatement(query.QualifiedTable(s.SourceSchema, p.Source), query.QualifiedTable(s.ReplicaSchema, p.Replica)))
			if p.NullableKey {
				script = append(script, UnkeyedStatement(p, s))
			}
			script = append(script, MonolithStatement(p, s, cell, ids, limit))
			continue
		}
		srcSt, rowsSt := SplitStatements(p, s, cell, ids)
		srcSt.Doc = append([]string{"On context " + src.Context + " (the source's silo):"}, srcSt.Doc...)
		rowsSt.Doc = append([]string{"On context " + rep.Context + " (the replica's silo):"}, rowsSt.Doc...)
		script = append(script, srcSt, rowsSt)
		if p.NullableKey {
			un := UnkeyedStatement(p, s)
			un.Doc = append([]string{"On context " + rep.Context + " (the replica's silo):"}, un.Doc...)
			script = append(script, un)
		}
	}
	return script
}

// DriftCounts are the objects of results missing, stale or orphan (drifted), and pending.
func DriftCounts(results []Result) (drifted, pending int64) {
	for _, r := range results {
		drifted += r.Counts.Missing + r.Counts.Stale + r.Counts.Orphan
		pending += r.Counts.Pending
	}
	return drifted, pending
}
