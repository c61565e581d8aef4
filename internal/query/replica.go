package query

// The statements of verify and replicate, in sql/replica.sql: one set per replication pair
// (the fields each compares are the pair's own SQL, not a template).

import "fmt"

// ReplicaTables are the tables of one replication pair's statements, each qualified with its
// database's schema: the source model's table, the replica's, the outbox Sentry writes the
// pair's rows to (the source's silo), and the organization mapping (which cell a member
// mapping belongs to).
type ReplicaTables struct {
	Source, Replica, Outbox, OrgReplica string
}

// ReplicaSelect says which objects a verify statement reads, and of which cell.
type ReplicaSelect struct {
	Pair     string // "organization", "organizationmember"
	Cell     string // the cell's name: region_name of its mappings
	Scope    Enum   // the pair's outbox scope and category (its pending rows)
	Category Enum
	IDs      []int64 // nil: every object
}

func (s ReplicaSelect) args() Args {
	a := Args{"cell": {Value: s.Cell, Note: "the cell's name (region_name)"}, "scope": {Value: s.Scope.Value, Note: s.Scope.Name},
		"category": {Value: s.Category.Value, Note: s.Category.Name}}
	if s.IDs != nil {
		a["ids"] = Arg{Value: s.IDs}
	}
	return a
}

func (s ReplicaSelect) on() []string {
	if s.IDs != nil {
		return []string{"ids"}
	}
	return nil
}

func (t ReplicaTables) idents(names ...string) map[string]string {
	all := map[string]string{"source": t.Source, "replica": t.Replica, "outbox": t.Outbox, "org_replica": t.OrgReplica}
	out := map[string]string{}
	for _, n := range names {
		out[n] = all[n]
	}
	return out
}

// VerifyPair compares the pair's source and replica in one database (a monolith): the
// drifted objects, in object order.
func VerifyPair(t ReplicaTables, s ReplicaSelect) Statement {
	args := s.args()
	if s.Pair != "organization" {
		delete(args, "cell") // only the organization mapping names its cell
	}
	return sqlStatement("verify-"+s.Pair, []string{
		fmt.Sprintf("Drift of %s -> %s: missing (no replica), orphan (no source), stale (fields differ),", t.Source, t.Replica),
		"with the object's queued outbox rows (pending: not drift yet) beside each; objects in sync are not listed.",
	}, t.idents("source", "replica", "outbox"), args, s.on()...)
}

// ReplicaSourceCount counts the pair's source rows (in sync = this less the drifted ones).
func ReplicaSourceCount(t ReplicaTables, s ReplicaSelect) Statement {
	args := Args{}
	if s.IDs != nil {
		args["ids"] = Arg{Value: s.IDs}
	}
	return sqlStatement("replica-source-count-"+s.Pair, []string{"Source rows of " + t.Source + "."},
		t.idents("source"), args, s.on()...)
}

// ReplicaSource is the cell side of a pair in two databases: its source rows and its pending
// objects, in object order.
func ReplicaSource(t ReplicaTables, s ReplicaSelect) Statement {
	args := s.args()
	delete(args, "cell")
	if s.Pair == "organization" {
		args["cell"] = Arg{Value: s.Cell, Note: "the cell's name (region_name)"}
	}
	return sqlStatement("replica-source-"+s.Pair, []string{"Source rows of " + t.Source + " and the objects with queued outbox rows, in object order."},
		t.idents("source", "outbox"), args, s.on()...)
}

// ReplicaRows is the control side of a pair in two databases: the cell's replica rows, in
// object order.
func ReplicaRows(t ReplicaTables, s ReplicaSelect) Statement {
	args := Args{"cell": {Value: s.Cell, Note: "the cell's name (region_name)"}}
	if s.IDs != nil {
		args["ids"] = Arg{Value: s.IDs}
	}
	names := []string{"replica"}
	if s.Pair == "organizationmember" {
		names = append(names, "org_replica")
	}
	return sqlStatement("replica-rows-"+s.Pair, []string{"Replica rows of " + t.Replica + " of cell " + s.Cell + ", in object order."},
		t.idents(names...), args, s.on()...)
}

// ReplicateSource reads the identifiers Sentry's outbox_for_update() gives the named objects
// that exist; ReplicateReplica those of objects only their replica knows (a deletion).
func ReplicateSource(t ReplicaTables, pair string, ids []int64) Statement {
	return sqlStatement("replicate-source-"+pair, []string{"The objects named that exist in " + t.Source + ", with their shard."},
		t.idents("source"), Args{"ids": {Value: ids}})
}

// ReplicateReplica reads the shard (and user) of objects whose source is gone from their
// replica rows.
func ReplicateReplica(t ReplicaTables, pair string, ids []int64) Statement {
	return sqlStatement("replicate-replica-"+pair, []string{"The replicas of objects gone from the source, with the shard their deletion outbox names."},
		t.idents("replica"), Args{"ids": {Value: ids}})
}

// OutboxRows are the rows replicate writes: one per object, payload "" for none.
type OutboxRows struct {
	Scope, Category Enum
	Shards, Objects []int64
	Payloads        []string
	PayloadType     string // the outbox's payload column: jsonb or text
	ThePast         string
}

// ReplicateOutbox inserts the outbox rows Sentry's outbox_for_update() saves.
func ReplicateOutbox(t ReplicaTables, r OutboxRows, why Why) Statement {
	pt := r.PayloadType
	if pt != "text" {
		pt = "jsonb"
	}
	st := sqlStatement("replicate-outbox", []string{
		fmt.Sprintf("The outbox rows Sentry's outbox_for_update() writes for %d object(s), in %s: a fresh row's schedule.", len(r.Objects), t.Outbox),
	}, map[string]string{"outbox": t.Outbox, "payload_type": pt}, Args{
		"scope": {Value: r.Scope.Value, Note: r.Scope.Name}, "category": {Value: r.Category.Value, Note: r.Category.Name},
		"shards": {Value: r.Shards}, "objects": {Value: r.Objects}, "payloads": {Value: r.Payloads},
		"the_past": {Value: r.ThePast, Note: "Sentry's THE_PAST"},
	})
	return why.Mark(st)
}

// ReplicaSample is doctor's cheap sample of organization -> organizationmapping.
func ReplicaSample(t ReplicaTables, sample int) Statement {
	return sqlStatement("replica-sample", []string{"The newest organizations, how many have no organization mapping (a sample: verify checks all)."},
		t.idents("source", "replica"), Args{"sample": {Value: sample}})
}

// ReplicaSampleRow is the row of ReplicaSample.
type ReplicaSampleRow struct {
	Sampled int64 `db:"sampled"`
	Missing int64 `db:"missing"`
}
