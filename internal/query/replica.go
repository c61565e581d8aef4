package query

// The statements of verify and replicate, in sql/replica.sql. Every replication pair runs the
// same statements: what differs between pairs (the tables, the key columns, the fields the
// receiver copies, the outbox shard and payload) is a ReplicaSpec, and the few SQL forms a
// field takes (a column, a BitField flag, the cell's name, a column of a row the source
// references) are written here, in one place, into the statements' regions. The skeleton
// (the joins, the pending outbox rows, the counts, the order) is the file's.

import (
	"fmt"
	"strings"
)

// ReplicaExpr is one value read from a pair's source row, in the forms Sentry's receivers
// take: a column, a BitField flag of a column, the cell's name, or a column of a row the
// source references (From names that join).
type ReplicaExpr struct {
	From   string // "" the source row; else the Alias of one of the spec's Joins
	Column string
	Mask   int64 // non-zero: the flag (Column & Mask) <> 0 of a BitField
	Cell   bool  // the cell's name (@cell): what the receiver stamps on the replica
	// Lines: the column's non-empty lines joined by "\n" ('' for NULL): what a receiver
	// writes for "\n".join(model.get_allowed_origins()).
	Lines bool
}

// Col is the source row's column c.
func Col(c string) ReplicaExpr { return ReplicaExpr{Column: c} }

// Flag is the BitField flag mask of the source row's column c.
func Flag(c string, mask int64) ReplicaExpr { return ReplicaExpr{Column: c, Mask: mask} }

// CellName is the cell's name.
func CellName() ReplicaExpr { return ReplicaExpr{Cell: true} }

// Lines is the source row's column c as its non-empty lines joined by "\n".
func Lines(c string) ReplicaExpr { return ReplicaExpr{Column: c, Lines: true} }

// Via is column c of the row join alias references.
func Via(alias, c string) ReplicaExpr { return ReplicaExpr{From: alias, Column: c} }

func (e ReplicaExpr) sql() string {
	if e.Cell {
		return "@cell::text"
	}
	from := "s"
	if e.From != "" {
		from = Ident(e.From)
	}
	col := from + "." + Ident(e.Column)
	if e.Mask != 0 {
		return fmt.Sprintf("(%s & %d) <> 0", col, e.Mask)
	}
	if e.Lines {
		return fmt.Sprintf(`array_to_string(array_remove(string_to_array(coalesce(%s, ''), E'\n'), ''), E'\n')`, col)
	}
	return col
}

// OnSource says whether e is a column of the source table itself (the ones introspection
// checks).
func (e ReplicaExpr) OnSource() bool { return !e.Cell && e.From == "" }

// ReplicaJoin is a row the source references, read beside it (an OrganizationMemberTeam's
// member, for its organization): LEFT JOIN Table Alias ON Alias.Key = s.From, in the
// source's schema.
type ReplicaJoin struct {
	Alias, Table, Key, From string
}

// ReplicaField is one field the receiver copies: the replica's column (the name verify
// gives the field) and the source value it copies into it.
type ReplicaField struct {
	Name   string
	Source ReplicaExpr
	// Secret: a token, key or hashed token. Compared as it is, it leaves the database only
	// as a digest (digestSQL), never as its value.
	Secret bool
}

// digestSQL is what a secret's value leaves the database as: 'digest:' and the first 16 hex
// digits of the SHA-256 of 'outboxctl:' and the value (the prefix keeps a digest of an api
// token from being the start of Sentry's own hashed_token, the token's SHA-256). NULL stays
// NULL.
func digestSQL(v string) string {
	return "'digest:' || left(encode(sha256(convert_to('outboxctl:' || " + v + "::text, 'UTF8')), 'hex'), 16)"
}

// ReplicaPayloadKey is one key of payload_for_update(): its value for an object that exists
// (Source) and the replica's column that holds it for one that is gone (a deletion outbox).
type ReplicaPayloadKey struct {
	Key     string
	Source  ReplicaExpr
	Replica string
}

// CellScope says which rows of a table are one cell's, when the silos are two databases:
// those whose Column names the cell, those whose organization (the ByOrganization column)
// has an organization mapping naming it, or those whose user (the ByUser column) is a
// member (sentry_organizationmembermapping) of an organization whose mapping names it. All
// empty: every row. The two mappings are the control silo's: the scope is for a table there.
type CellScope struct {
	Column         string
	ByOrganization string
	ByUser         string
	// From: ByOrganization is a column of this join's row (an AuthIdentity's provider), not
	// of the table's own.
	From string
}

// OrganizationMapping is the table CellScope.ByOrganization looks the cell up in (the
// control silo's); OrganizationMemberMapping the one ByUser finds a user's organizations in.
const (
	OrganizationMapping       = "sentry_organizationmapping"
	OrganizationMemberMapping = "sentry_organizationmembermapping"
)

// ReplicaSpec is one replication pair as the statements read it.
type ReplicaSpec struct {
	Name       string // verify's PAIR
	SourceSilo Silo   // where the source model and the outbox Sentry writes for it live
	// Source and Replica are the tables (unqualified); SourceKey the source's id column,
	// ReplicaKey the replica's column holding it (the object's id).
	Source, Replica       string
	SourceKey, ReplicaKey string
	Joins                 []ReplicaJoin
	Fields                []ReplicaField
	// Shard is the outbox row's shard_identifier, read from the source row (what
	// infer_identifiers gives); ReplicaShard the replica's column holding the same value (a
	// gone source's deletion outbox, an orphan's pending rows).
	Shard        ReplicaExpr
	ReplicaShard string
	Payload      []ReplicaPayloadKey
	// ReplicaCell and SourceCell select one cell's rows when the silos are two databases:
	// ReplicaCell the replicas (a cell -> control pair's, in the control silo), SourceCell
	// the sources (a control -> cell pair's: the objects whose outbox targets the cell).
	ReplicaCell, SourceCell CellScope
	Scope, Category         Enum
	// SeveralReplicaRows: the replica's key column is not unique (ApiKeyReplica: "use
	// last()"), so an object's newest replica row is the one compared.
	SeveralReplicaRows bool
	// NullableKey: the replica's key column can be NULL (OrganizationMemberMapping rows from
	// before organizationmember_id); verify counts those rows apart (ReplicaUnkeyed).
	NullableKey bool
}

// ShardIsKey says the outbox shard is the object's own id (an Organization's): a deletion
// outbox needs neither row.
func (s ReplicaSpec) ShardIsKey() bool {
	return s.Shard.OnSource() && s.Shard.Mask == 0 && s.Shard.Column == s.SourceKey
}

// Outbox is the outbox table Sentry writes the pair's rows to: the source silo's.
func (s ReplicaSpec) Outbox() string {
	if s.SourceSilo == SiloControl {
		return ControlTable
	}
	return CellTable
}

// ReplicaSelect says what a verify statement reads: the two sides' schemas ("" for the
// search path; the same in a monolith), the cell, the objects (nil: every one) and, for a
// monolith, how many drifted objects to list (0: all).
type ReplicaSelect struct {
	SourceSchema, ReplicaSchema string
	Cell                        string
	IDs                         []int64
	Limit                       int
}

func (sel ReplicaSelect) on() []string {
	if sel.IDs != nil {
		return []string{"ids"}
	}
	return nil
}

// rowsFor are the regions of a side's rows: which columns, which filters.
type rowsFor struct {
	values, payload, cell bool
}

// sourceRows is the pair's source rows (replica-part-source-rows): the object's id, its
// shard and (as asked) the fields typed (s_<field>) and the payload's values (p_<key>),
// filtered by ids and, for a split read, the cell's scope. An error filling the part is
// returned by the statement's Render and Bind.
func (s ReplicaSpec) sourceRows(schema string, ids bool, f rowsFor) string {
	var cols []string
	if f.values {
		for _, fl := range s.Fields {
			cols = append(cols, fl.Source.sql()+" AS "+Ident("s_"+fl.Name))
		}
	}
	if f.payload {
		for _, p := range s.Payload {
			cols = append(cols, p.Source.sql()+" AS "+Ident("p_"+p.Key))
		}
	}
	var joins strings.Builder
	for _, j := range s.Joins {
		part, err := Fill("replica-part-join", map[string]string{"table": qualified(schema, j.Table), "alias": Ident(j.Alias), "key": Ident(j.Key), "from": Ident(j.From)})
		if err != nil {
			return "/* " + err.Error() + " */"
		}
		joins.WriteString("\n                  " + part)
	}
	idents := map[string]string{"source_key": Ident(s.SourceKey), "shard": s.Shard.sql(), "columns": columnList(cols),
		"source": qualified(schema, s.Source), "joins": joins.String()}
	return rowsPart("replica-part-source-rows", idents, schema, ids, f.cell, s.SourceCell)
}

// replicaRows is the pair's replica rows with an object id (replica-part-replica-rows): the
// object's id, its shard, the replica row's own id and (as asked) the fields (r_<field>)
// and the payload's values (p_<key>).
func (s ReplicaSpec) replicaRows(schema string, ids bool, f rowsFor) string {
	var cols []string
	if f.values {
		for _, fl := range s.Fields {
			cols = append(cols, "r."+Ident(fl.Name)+" AS "+Ident("r_"+fl.Name))
		}
	}
	if f.payload {
		for _, p := range s.Payload {
			cols = append(cols, "r."+Ident(p.Replica)+" AS "+Ident("p_"+p.Key))
		}
	}
	idents := map[string]string{"replica_key": Ident(s.ReplicaKey), "replica_shard": Ident(s.ReplicaShard), "columns": columnList(cols),
		"replica": qualified(schema, s.Replica)}
	return rowsPart("replica-part-replica-rows", idents, schema, ids, f.cell, s.ReplicaCell)
}

// rowsPart fills a rows part with its filters: @ids, and the cell scope when cell.
func rowsPart(name string, idents map[string]string, schema string, ids, cell bool, scope CellScope) string {
	var on []string
	if ids {
		on = append(on, "ids")
	}
	if cell && scope.Column != "" {
		on = append(on, "cell_column")
		idents["cell_column"] = Ident(scope.Column)
	}
	if cell && scope.ByOrganization != "" {
		on = append(on, "cell_org")
		idents["org_column"] = Ident(scope.ByOrganization)
		idents["org_row"] = "s"
		if name == "replica-part-replica-rows" {
			idents["org_row"] = "r"
		}
		if scope.From != "" {
			idents["org_row"] = Ident(scope.From)
		}
	}
	if cell && scope.ByUser != "" {
		on = append(on, "cell_user")
		idents["member_mapping"], idents["user_column"] = qualified(schema, OrganizationMemberMapping), Ident(scope.ByUser)
	}
	if cell && (scope.ByOrganization != "" || scope.ByUser != "") {
		idents["org_mapping"] = qualified(schema, OrganizationMapping)
	}
	text, err := Fill(name, idents, on...)
	if err != nil {
		return "/* " + err.Error() + " */"
	}
	return text
}

// columnList is the part's columns region: each after a comma, one a line.
func columnList(cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		b.WriteString(",\n                       " + c)
	}
	return b.String()
}

func (c CellScope) empty() bool { return c.Column == "" && c.ByOrganization == "" && c.ByUser == "" }

// differs is the monolith's typed comparison of the fields: true when one differs.
func (s ReplicaSpec) differs() string {
	if len(s.Fields) == 0 {
		return "false"
	}
	src, rep := make([]string, len(s.Fields)), make([]string, len(s.Fields))
	for i, f := range s.Fields {
		src[i], rep[i] = "s."+Ident("s_"+f.Name), "r."+Ident("r_"+f.Name)
	}
	return "(" + strings.Join(src, ", ") + ")\n                  IS DISTINCT FROM (" + strings.Join(rep, ", ") + ")"
}

// texts are the fields as text (prefix s or r), what Go compares and prints, one a line at
// indent.
func (s ReplicaSpec) texts(indent int, prefixes ...string) string {
	var parts []string
	for _, f := range s.Fields {
		for _, p := range prefixes {
			n := Ident(p + "_" + f.Name)
			if f.Secret {
				parts = append(parts, digestSQL(p+"."+n)+" AS "+n)
				continue
			}
			parts = append(parts, p+"."+n+"::text AS "+n)
		}
	}
	if len(parts) == 0 {
		return "NULL::text AS no_fields"
	}
	return strings.Join(parts, ",\n"+strings.Repeat(" ", indent))
}

// payloadTexts are the payload's values as text (p_<key>) of alias.
func (s ReplicaSpec) payloadTexts(alias string) string {
	var b strings.Builder
	for _, p := range s.Payload {
		n := Ident("p_" + p.Key)
		fmt.Fprintf(&b, ", %s.%s::text AS %s", alias, n, n)
	}
	return b.String()
}

func (s ReplicaSpec) args(sel ReplicaSelect) Args {
	a := Args{"scope": {Value: s.Scope.Value, Note: s.Scope.Name}, "category": {Value: s.Category.Value, Note: s.Category.Name}}
	if sel.IDs != nil {
		a["ids"] = Arg{Value: sel.IDs}
	}
	return a
}

func (s ReplicaSpec) usesCell() bool {
	for _, f := range s.Fields {
		if f.Source.Cell {
			return true
		}
	}
	return false
}

// VerifyPair compares the pair's source and replica in one database (a monolith), in one
// statement: one pass over both tables counts every class, and the first sel.Limit drifted
// objects (in object order) are read again, by their ids, with their fields' values and
// their queued outbox rows. Every row carries the counts; with nothing drifted there is one
// row, its object_id NULL.
func VerifyPair(s ReplicaSpec, sel ReplicaSelect) Statement {
	ids := sel.IDs != nil
	listed := sel.Limit
	if listed <= 0 {
		listed = 1<<31 - 1
	}
	args := s.args(sel)
	args["listed"] = Arg{Value: listed, Note: "drifted objects listed with their values (--limit)"}
	if s.usesCell() {
		args["cell"] = Arg{Value: sel.Cell, Note: "the cell's name (region_name)"}
	}
	all := rowsFor{values: true}
	on := sel.on()
	if s.SeveralReplicaRows {
		on = append(on, "newest")
	}
	return sqlStatement("verify-pair", []string{
		fmt.Sprintf("Drift of %s -> %s: the count of each class (missing: no replica, orphan: no source, stale: fields differ,",
			qualified(sel.SourceSchema, s.Source), qualified(sel.ReplicaSchema, s.Replica)),
		"pending: one of these with the object's outbox rows queued in its shard), then the first drifted objects with their values.",
	}, map[string]string{
		"source_rows":  s.sourceRows(sel.SourceSchema, ids, all),
		"replica_rows": s.replicaRows(sel.ReplicaSchema, ids, all),
		"differs":      s.differs(),
		"values":       s.texts(15, "s", "r"),
		"outbox":       qualified(sel.SourceSchema, s.Outbox()),
	}, args, on...)
}

// ReplicaSource is the source's side of a pair in two databases: its rows with their fields
// as text and their queued outbox rows in their shard, and the objects with queued rows and
// no source row (a deletion not yet delivered: one row per shard), in object order, the
// source's row first.
func ReplicaSource(s ReplicaSpec, sel ReplicaSelect) Statement {
	args := s.args(sel)
	on := sel.on()
	control := s.SourceSilo == SiloControl
	if s.usesCell() || control || !s.SourceCell.empty() {
		args["cell"] = Arg{Value: sel.Cell, Note: "the cell's name (region_name)"}
	}
	if !control {
		on = append(on, "cell_outbox")
	}
	return sqlStatement("replica-source", []string{
		"Source rows of " + qualified(sel.SourceSchema, s.Source) + " and the objects with queued outbox rows, in object order.",
	}, map[string]string{
		"source_rows": s.sourceRows(sel.SourceSchema, sel.IDs != nil, rowsFor{values: true, cell: true}),
		"source_text": s.texts(7, "s"),
		"outbox":      qualified(sel.SourceSchema, s.Outbox()),
	}, args, on...)
}

// ReplicaRows is the replica's side of a pair in two databases: the cell's replica rows
// with their shard and fields as text, in object order.
func ReplicaRows(s ReplicaSpec, sel ReplicaSelect) Statement {
	args := Args{}
	if sel.IDs != nil {
		args["ids"] = Arg{Value: sel.IDs}
	}
	if !s.ReplicaCell.empty() {
		args["cell"] = Arg{Value: sel.Cell, Note: "the cell's name (region_name)"}
	}
	return sqlStatement("replica-rows", []string{
		"Replica rows of " + qualified(sel.ReplicaSchema, s.Replica) + " of cell " + sel.Cell + ", in object order.",
	}, map[string]string{
		"replica_rows": s.replicaRows(sel.ReplicaSchema, sel.IDs != nil, rowsFor{values: true, cell: true}),
		"replica_text": s.texts(7, "r"),
	}, args)
}

// ReplicateSource reads the identifiers Sentry's outbox_for_update() gives the named objects
// that exist: their shard and their payload's values (p_<key>, text).
func ReplicateSource(s ReplicaSpec, schema string, ids []int64) Statement {
	return sqlStatement("replicate-source", []string{"The objects named that exist in " + qualified(schema, s.Source) + ", with their shard and payload."},
		map[string]string{"source_rows": s.sourceRows(schema, true, rowsFor{payload: true}), "payload": s.payloadTexts("s")},
		Args{"ids": {Value: ids}})
}

// ReplicateReplica reads the shard and payload of objects whose source is gone from their
// replica rows (the newest first).
func ReplicateReplica(s ReplicaSpec, schema string, ids []int64) Statement {
	return sqlStatement("replicate-replica", []string{"The replicas of objects gone from " + qualified(schema, s.Source) + ", with the shard and payload their deletion outbox names."},
		map[string]string{"replica_rows": s.replicaRows(schema, true, rowsFor{payload: true}), "payload": s.payloadTexts("r")},
		Args{"ids": {Value: ids}})
}

// ReplicaColumns lists the columns of tables (qualified names), for verify to leave out the
// fields a database's tables do not have yet.
func ReplicaColumns(tables []string) Statement {
	return sqlStatement("replica-columns", []string{"The columns of the pair's tables (a field whose column is missing is not compared)."},
		nil, Args{"tables": {Value: tables}})
}

// ReplicaUnkeyed counts the replica rows of s (in schema) whose key column is NULL: rows no
// object's id matches (a NullableKey pair's).
func ReplicaUnkeyed(s ReplicaSpec, schema string) Statement {
	return sqlStatement("replica-unkeyed", []string{"The rows of " + qualified(schema, s.Replica) + " whose " + s.ReplicaKey + " is NULL: Sentry's receiver never finds them (not compared)."},
		map[string]string{"replica": qualified(schema, s.Replica), "key": Ident(s.ReplicaKey)}, nil)
}

// ReplicaUnkeyedRow is the row of ReplicaUnkeyed.
type ReplicaUnkeyedRow struct {
	Unkeyed int64 `db:"unkeyed"`
}

// ReplicaColumnRow is one row of ReplicaColumns.
type ReplicaColumnRow struct {
	Table  string `db:"table_name"`
	Column string `db:"column_name"`
}

// QualifiedTable is table in schema ("" for the search path), as the statements name it.
func QualifiedTable(schema, table string) string { return qualified(schema, table) }

// OutboxRows are the rows replicate writes: one per object (and, for a control outbox, per
// target cell: Cells), payload "" for none.
type OutboxRows struct {
	Scope, Category Enum
	Cells           []string // the control outbox's region_name of each row; nil for the cell outbox
	Shards, Objects []int64
	Payloads        []string
	PayloadType     string // the outbox's payload column: jsonb or text
	ThePast         string
}

// ReplicateOutbox inserts the outbox rows Sentry's outbox_for_update() (or, for a control
// model, outboxes_for_update()) saves, into outbox (qualified).
func ReplicateOutbox(outbox string, r OutboxRows, why Why) Statement {
	pt := r.PayloadType
	if pt != "text" {
		pt = "jsonb"
	}
	args := Args{
		"scope": {Value: r.Scope.Value, Note: r.Scope.Name}, "category": {Value: r.Category.Value, Note: r.Category.Name},
		"shards": {Value: r.Shards}, "objects": {Value: r.Objects}, "payloads": {Value: r.Payloads},
		"the_past": {Value: r.ThePast, Note: "Sentry's THE_PAST"},
	}
	name := "replicate-outbox"
	if r.Cells != nil {
		name = "replicate-outbox-control"
		args["cells"] = Arg{Value: r.Cells}
	}
	st := sqlStatement(name, []string{
		fmt.Sprintf("The outbox rows Sentry's outbox_for_update() writes for %d object(s), in %s: a fresh row's schedule.", len(r.Objects), outbox),
	}, map[string]string{"outbox": outbox, "payload_type": pt}, args)
	return why.Mark(st)
}

// ReplicaTables are the tables of doctor's sample, qualified.
type ReplicaTables struct {
	Source, Replica string
}

// ReplicaSample is doctor's cheap sample of organization -> organizationmapping.
func ReplicaSample(t ReplicaTables, sample int) Statement {
	return sqlStatement("replica-sample", []string{"The newest organizations, how many have no organization mapping (a sample: verify checks all)."},
		map[string]string{"source": t.Source, "replica": t.Replica}, Args{"sample": {Value: sample}})
}

// ReplicaSampleRow is the row of ReplicaSample.
type ReplicaSampleRow struct {
	Sampled int64 `db:"sampled"`
	Missing int64 `db:"missing"`
}
