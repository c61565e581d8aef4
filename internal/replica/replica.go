// Package replica compares Sentry's replicated models with their replicas (verify) and
// writes the outbox rows that make Sentry replicate them again (replicate). The pairs, the
// fields each replica copies and the outbox rows Sentry writes for them are read from
// Sentry's source: docs/replicas.md says where.
package replica

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// The drift classes, as verify's drift column says them.
const (
	Missing = "missing" // a source row without its replica
	Stale   = "stale"   // both, with fields that differ
	Orphan  = "orphan"  // a replica whose source is gone: a deletion never delivered
	Pending = "pending" // drifted, with an outbox row for the object still queued: not drift yet
)

// Pair is one replication pair: a model of one silo and its replica in the other.
type Pair struct {
	Name      string // verify's PAIR argument
	Source    string // the source model's table
	Replica   string // the replica's table
	Direction string // cell -> control
	// Scope and Category are the outbox rows Sentry writes for the source model.
	Scope, Category query.Enum
	// Fields are what the replica copies, as the statements name them (s_<f>, r_<f>).
	Fields []string
	// Payload is payload_for_update()'s: whether the outbox carries {"user_id": ...}.
	UserIDPayload bool
}

// Scopes and categories of the pairs (reference §2: ints are append-only).
var (
	orgScope      = query.Enum{Value: 0, Name: "ORGANIZATION_SCOPE"}
	orgUpdate     = query.Enum{Value: 2, Name: "ORGANIZATION_UPDATE"}
	memberUpdate  = query.Enum{Value: 3, Name: "ORGANIZATION_MEMBER_UPDATE"}
	organizations = Pair{Name: "organization", Source: "sentry_organization", Replica: "sentry_organizationmapping", Direction: "cell -> control",
		Scope: orgScope, Category: orgUpdate,
		Fields: []string{"slug", "name", "status", "region_name", "allow_joinleave", "enhanced_privacy", "require_2fa", "early_adopter",
			"disable_shared_issues", "disable_new_visibility_features", "require_email_verification", "codecov_access",
			"disable_member_project_creation", "prevent_superuser_access", "disable_member_invite"}}
	members = Pair{Name: "organizationmember", Source: "sentry_organizationmember", Replica: "sentry_organizationmembermapping", Direction: "cell -> control",
		Scope: orgScope, Category: memberUpdate, UserIDPayload: true,
		Fields: []string{"organization_id", "role", "user_id", "email", "inviter_id", "invite_status"}}
)

// Pairs are the replication pairs verify and replicate know, in the order verify checks
// them.
func Pairs() []Pair { return []Pair{organizations, members} }

// Names are the pairs' names, for help and completion.
func Names() []string {
	var out []string
	for _, p := range Pairs() {
		out = append(out, p.Name)
	}
	return out
}

// Lookup finds a pair by its name or by either of its tables' names.
func Lookup(name string) (Pair, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range Pairs() {
		if n == p.Name || n == p.Source || n == p.Replica || "sentry_"+n == p.Source {
			return p, nil
		}
	}
	return Pair{}, fmt.Errorf("unknown replication pair %q: known pairs are %s", name, strings.Join(Names(), ", "))
}

// Tables qualifies the pair's tables with a database's schema ("" for the search path).
func (p Pair) Tables(schema string) query.ReplicaTables {
	q := func(t string) string {
		if schema == "" {
			return query.Ident(t)
		}
		return query.Ident(schema) + "." + query.Ident(t)
	}
	return query.ReplicaTables{Source: q(p.Source), Replica: q(p.Replica), Outbox: q(query.CellTable), OrgReplica: q(organizations.Replica)}
}

// Select is the pair's verify selection of one cell.
func (p Pair) Select(cell string, ids []int64) query.ReplicaSelect {
	return query.ReplicaSelect{Pair: p.Name, Cell: cell, Scope: p.Scope, Category: p.Category, IDs: ids}
}

// PendingRows are an object's queued outbox rows: its shard, how many rows, and when the
// shard is next attempted.
type PendingRows struct {
	Shard int64
	Rows  int64
	Next  time.Time
	Due   bool
}

// Record is one object as the statements read it: its source and replica values (text, nil
// for NULL; nil slices when there is no such row) and its queued outbox rows.
type Record struct {
	ObjectID        int64
	Source, Replica []*string
	Pending         *PendingRows
}

// HasSource and HasReplica say which rows exist.
func (r Record) HasSource() bool  { return r.Source != nil }
func (r Record) HasReplica() bool { return r.Replica != nil }

// FieldDiff is one field that differs, with both values (nil for NULL).
type FieldDiff struct {
	Field   string  `json:"field"`
	Source  *string `json:"source"`
	Replica *string `json:"replica"`
}

// Drift is one drifted object.
type Drift struct {
	Pair     string
	Class    string // Missing, Stale, Orphan or Pending
	Would    string // for Pending: the class it is until its outbox is delivered
	ObjectID int64
	Fields   []FieldDiff
	Pending  *PendingRows
}

// Classify says whether r is drifted, and how: a missing or orphan object, a stale one, or
// any of these with an outbox row queued for it (pending); ok is false for an object in sync
// (queued or not).
func Classify(p Pair, r Record) (d Drift, ok bool) {
	d = Drift{Pair: p.Name, ObjectID: r.ObjectID, Pending: r.Pending}
	switch {
	case !r.HasSource() && !r.HasReplica():
		// A deletion queued for an object already gone on both sides: nothing to do.
		return d, false
	case !r.HasReplica():
		d.Class = Missing
	case !r.HasSource():
		d.Class = Orphan
	default:
		for i, f := range p.Fields {
			if !sameText(r.Source[i], r.Replica[i]) {
				d.Fields = append(d.Fields, FieldDiff{Field: f, Source: r.Source[i], Replica: r.Replica[i]})
			}
		}
		if len(d.Fields) == 0 {
			return d, false
		}
		d.Class = Stale
	}
	if r.Pending != nil {
		d.Would, d.Class = d.Class, Pending
	}
	return d, true
}

func sameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// FieldsJSON is the drift's fields as verify's fields column holds them: for a stale
// object {"slug": {"source": "a", "replica": "b"}, …} in the pair's field order, else null.
func (d Drift) FieldsJSON() string {
	if len(d.Fields) == 0 {
		return "null"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range d.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Field)
		v, _ := json.Marshal(struct {
			Source  *string `json:"source"`
			Replica *string `json:"replica"`
		}{f.Source, f.Replica})
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// Next is what to do about the drift: the command that repairs it, or what it waits for.
// command makes a command line of the invocation (its --schema, --context, …) and args, so
// a printed next runs as printed.
func (d Drift) Next(command func(args ...string) string) string {
	switch d.Class {
	case Pending:
		if d.Pending.Due {
			return fmt.Sprintf("wait: shard ORGANIZATION_SCOPE/%d is due; Sentry's workers deliver it (or drain it: %s)", d.Pending.Shard,
				command("inspect", "shard", "organization", fmt.Sprint(d.Pending.Shard)))
		}
		return command("reschedule", "organization", fmt.Sprint(d.Pending.Shard), "--reason", "replicate: deliver the queued outbox")
	}
	// Missing, stale and orphan alike: replicate writes the outbox Sentry would (for an
	// orphan, whose source is gone, the deletion outbox).
	return command("replicate", d.Pair, fmt.Sprint(d.ObjectID))
}

// Counts are one pair's summary.
type Counts struct {
	InSync, Missing, Stale, Orphan, Pending int64
}

// Drifted is the number of drifted objects.
func (c Counts) Drifted() int64 { return c.Missing + c.Stale + c.Orphan + c.Pending }

// Collector counts every drift of a pair and keeps the first limit of them (0: all), so a
// verify of a million drifted rows holds only what it prints.
type Collector struct {
	Pair    Pair
	Limit   int
	Counts  Counts
	Kept    []Drift
	sources int64 // source rows seen (split) or counted (monolith)
	drifted int64 // drifted objects that have a source
}

// Add classifies one record.
func (c *Collector) Add(r Record) {
	if r.HasSource() {
		c.sources++
	}
	d, ok := Classify(c.Pair, r)
	if !ok {
		return
	}
	if r.HasSource() {
		c.drifted++
	}
	switch d.Class {
	case Missing:
		c.Counts.Missing++
	case Stale:
		c.Counts.Stale++
	case Orphan:
		c.Counts.Orphan++
	case Pending:
		c.Counts.Pending++
	}
	if c.Limit == 0 || len(c.Kept) < c.Limit {
		c.Kept = append(c.Kept, d)
	}
}

// Done sets the in-sync count from the number of source rows (sources < 0: the ones Add
// saw, as the split merge sees every source row).
func (c *Collector) Done(sources int64) {
	if sources < 0 {
		sources = c.sources
	}
	c.Counts.InSync = sources - c.drifted
}
