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

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
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

// sql is e's form (sql/replica_parts.sql); a flag's bit is bound as @mask_<name>, the
// part's own value (args gets it).
func (e ReplicaExpr) sql(name string, args Args) (sqltemplate.Part, error) {
	if e.Cell {
		return part("replica-part-cell", nil, nil)
	}
	from := "s"
	if e.From != "" {
		from = Ident(e.From)
	}
	idents := map[string]string{"from": from, "column": Ident(e.Column)}
	switch {
	case e.Mask != 0:
		p, err := part("replica-part-flag", idents, nil)
		if err != nil {
			return p, err
		}
		mask := "mask_" + name
		args[mask] = Arg{Value: e.Mask}
		return p.Rename(func(string) string { return mask })
	case e.Lines:
		return part("replica-part-lines", idents, nil)
	}
	return part("replica-part-column", idents, nil)
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
// filtered by ids and, for a split read, the cell's scope. The values its parts bind (a
// flag's bit) go into args.
func (s ReplicaSpec) sourceRows(schema string, ids bool, f rowsFor, args Args) (sqltemplate.Part, error) {
	var cols []sqltemplate.Part
	add := func(e ReplicaExpr, name string) error {
		v, err := e.sql(name, args)
		if err != nil {
			return err
		}
		c, err := part("replica-part-as", map[string]string{"name": Ident(name)}, map[string]sqltemplate.Part{"value": v})
		cols = append(cols, c)
		return err
	}
	if f.values {
		for _, fl := range s.Fields {
			if err := add(fl.Source, "s_"+fl.Name); err != nil {
				return sqltemplate.Part{}, err
			}
		}
	}
	if f.payload {
		for _, p := range s.Payload {
			if err := add(p.Source, "p_"+p.Key); err != nil {
				return sqltemplate.Part{}, err
			}
		}
	}
	var joins []sqltemplate.Part
	for _, j := range s.Joins {
		p, err := part("replica-part-join", map[string]string{"table": qualified(schema, j.Table), "alias": Ident(j.Alias), "key": Ident(j.Key), "from": Ident(j.From)}, nil)
		if err != nil {
			return p, err
		}
		joins = append(joins, sqltemplate.Sep("\n                  "), p)
	}
	shard, err := s.Shard.sql("shard", args)
	if err != nil {
		return shard, err
	}
	idents := map[string]string{"source_key": Ident(s.SourceKey), "source": qualified(schema, s.Source)}
	regions := map[string]sqltemplate.Part{"shard": shard, "columns": columnList(cols), "joins": sqltemplate.Concat(joins...)}
	return rowsPart("replica-part-source-rows", idents, regions, schema, ids, f.cell, s.SourceCell)
}

// replicaRows is the pair's replica rows with an object id (replica-part-replica-rows): the
// object's id, its shard, the replica row's own id and (as asked) the fields (r_<field>)
// and the payload's values (p_<key>).
func (s ReplicaSpec) replicaRows(schema string, ids bool, f rowsFor) (sqltemplate.Part, error) {
	var cols []sqltemplate.Part
	add := func(column, name string) error {
		v, err := part("replica-part-column", map[string]string{"from": "r", "column": Ident(column)}, nil)
		if err != nil {
			return err
		}
		c, err := part("replica-part-as", map[string]string{"name": Ident(name)}, map[string]sqltemplate.Part{"value": v})
		cols = append(cols, c)
		return err
	}
	if f.values {
		for _, fl := range s.Fields {
			if err := add(fl.Name, "r_"+fl.Name); err != nil {
				return sqltemplate.Part{}, err
			}
		}
	}
	if f.payload {
		for _, p := range s.Payload {
			if err := add(p.Replica, "p_"+p.Key); err != nil {
				return sqltemplate.Part{}, err
			}
		}
	}
	idents := map[string]string{"replica_key": Ident(s.ReplicaKey), "replica_shard": Ident(s.ReplicaShard), "replica": qualified(schema, s.Replica)}
	return rowsPart("replica-part-replica-rows", idents, map[string]sqltemplate.Part{"columns": columnList(cols)}, schema, ids, f.cell, s.ReplicaCell)
}

// rowsPart fills a rows part with its filters: @ids, and the cell scope when cell.
func rowsPart(name string, idents map[string]string, regions map[string]sqltemplate.Part, schema string, ids, cell bool, scope CellScope) (sqltemplate.Part, error) {
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
	return part(name, idents, regions, on...)
}

// columnList is the part's columns region: each after a comma, one a line.
func columnList(cols []sqltemplate.Part) sqltemplate.Part {
	out := make([]sqltemplate.Part, 0, 2*len(cols))
	for _, c := range cols {
		out = append(out, sqltemplate.Sep(",\n                       "), c)
	}
	return sqltemplate.Concat(out...)
}

func (c CellScope) empty() bool { return c.Column == "" && c.ByOrganization == "" && c.ByUser == "" }

// differs is the monolith's typed comparison of the fields: true when one differs.
func (s ReplicaSpec) differs() (sqltemplate.Part, error) {
	if len(s.Fields) == 0 {
		return part("replica-part-same", nil, nil)
	}
	src, rep := make([]sqltemplate.Part, len(s.Fields)), make([]sqltemplate.Part, len(s.Fields))
	for i, f := range s.Fields {
		var err error
		if src[i], err = part("replica-part-field", map[string]string{"alias": "s", "name": Ident("s_" + f.Name)}, nil); err != nil {
			return src[i], err
		}
		if rep[i], err = part("replica-part-field", map[string]string{"alias": "r", "name": Ident("r_" + f.Name)}, nil); err != nil {
			return rep[i], err
		}
	}
	return part("replica-part-differs", nil, map[string]sqltemplate.Part{"sources": sqltemplate.Join(", ", src), "replicas": sqltemplate.Join(", ", rep)})
}

// texts are the fields as text (prefix s or r), what Go compares and prints, one a line at
// indent: a secret's as its digest.
func (s ReplicaSpec) texts(indent int, prefixes ...string) (sqltemplate.Part, error) {
	var parts []sqltemplate.Part
	for _, f := range s.Fields {
		for _, p := range prefixes {
			name := "replica-part-text"
			if f.Secret {
				name = "replica-part-digest"
			}
			t, err := part(name, map[string]string{"alias": p, "name": Ident(p + "_" + f.Name)}, nil)
			if err != nil {
				return t, err
			}
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return part("replica-part-no-fields", nil, nil)
	}
	return sqltemplate.Join(",\n"+strings.Repeat(" ", indent), parts), nil
}

// payloadTexts are the payload's values as text (p_<key>) of alias, each after a comma.
func (s ReplicaSpec) payloadTexts(alias string) (sqltemplate.Part, error) {
	var parts []sqltemplate.Part
	for _, p := range s.Payload {
		t, err := part("replica-part-text", map[string]string{"alias": alias, "name": Ident("p_" + p.Key)}, nil)
		if err != nil {
			return t, err
		}
		parts = append(parts, sqltemplate.Sep(", "), t)
	}
	return sqltemplate.Concat(parts...), nil
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
	r := newRegions()
	r.set("source_rows")(s.sourceRows(sel.SourceSchema, ids, all, args))
	r.set("replica_rows")(s.replicaRows(sel.ReplicaSchema, ids, all))
	r.set("differs")(s.differs())
	r.set("values")(s.texts(15, "s", "r"))
	return r.statement("verify-pair", []string{
		fmt.Sprintf("Drift of %s -> %s: the count of each class (missing: no replica, orphan: no source, stale: fields differ,",
			qualified(sel.SourceSchema, s.Source), qualified(sel.ReplicaSchema, s.Replica)),
		"pending: one of these with the object's outbox rows queued in its shard), then the first drifted objects with their values.",
	}, map[string]string{"outbox": qualified(sel.SourceSchema, s.Outbox())}, args, on...)
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
	r := newRegions()
	r.set("source_rows")(s.sourceRows(sel.SourceSchema, sel.IDs != nil, rowsFor{values: true, cell: true}, args))
	r.set("source_text")(s.texts(7, "s"))
	return r.statement("replica-source", []string{
		"Source rows of " + qualified(sel.SourceSchema, s.Source) + " and the objects with queued outbox rows, in object order.",
	}, map[string]string{"outbox": qualified(sel.SourceSchema, s.Outbox())}, args, on...)
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
	r := newRegions()
	r.set("replica_rows")(s.replicaRows(sel.ReplicaSchema, sel.IDs != nil, rowsFor{values: true, cell: true}))
	r.set("replica_text")(s.texts(7, "r"))
	return r.statement("replica-rows", []string{
		"Replica rows of " + qualified(sel.ReplicaSchema, s.Replica) + " of cell " + sel.Cell + ", in object order.",
	}, nil, args)
}

// ReplicateSource reads the identifiers Sentry's outbox_for_update() gives the named objects
// that exist: their shard and their payload's values (p_<key>, text).
func ReplicateSource(s ReplicaSpec, schema string, ids []int64) Statement {
	args := Args{"ids": {Value: ids}}
	r := newRegions()
	r.set("source_rows")(s.sourceRows(schema, true, rowsFor{payload: true}, args))
	r.set("payload")(s.payloadTexts("s"))
	return r.statement("replicate-source", []string{"The objects named that exist in " + qualified(schema, s.Source) + ", with their shard and payload."},
		nil, args)
}

// ReplicateReplica reads the shard and payload of objects whose source is gone from their
// replica rows (the newest first).
func ReplicateReplica(s ReplicaSpec, schema string, ids []int64) Statement {
	r := newRegions()
	r.set("replica_rows")(s.replicaRows(schema, true, rowsFor{payload: true}))
	r.set("payload")(s.payloadTexts("r"))
	return r.statement("replicate-replica", []string{"The replicas of objects gone from " + qualified(schema, s.Source) + ", with the shard and payload their deletion outbox names."},
		nil, Args{"ids": {Value: ids}})
}

// regions are a statement's regions as its parts are filled; the first error filling one
// is the statement's.
type regions struct {
	parts map[string]sqltemplate.Part
	err   error
}

func newRegions() *regions { return &regions{parts: map[string]sqltemplate.Part{}} }

// set keeps region name's part, or its error.
func (r *regions) set(name string) func(sqltemplate.Part, error) {
	return func(p sqltemplate.Part, err error) {
		if err != nil && r.err == nil {
			r.err = err
		}
		r.parts[name] = p
	}
}

// statement is regionStatement with the regions, and their error when one failed.
func (r *regions) statement(name string, doc []string, idents map[string]string, args Args, on ...string) Statement {
	st := regionStatement(name, doc, idents, r.parts, args, on...)
	if r.err != nil && st.err == nil {
		st.err = r.err
	}
	return st
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
