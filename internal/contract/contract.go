// Package contract declares the output contract of every command: which Go type each
// section of its JSON document is, and the JSON Schema generated from those types
// (docs/schema/<command>.json, checked for drift by TestSchemasUpToDate, and every -o json
// output of the cmd tests is validated against its command's schema).
//
// A document (render.Doc) prints as JSON like this (internal/render/encode.go): a document
// of one section is that section's value, a document of several one object keyed by section
// name; a table is an array of row objects, a card one object; keys in the Go type's field
// order. A read over several contexts (--context a,b, --all-contexts) prints the contexts'
// documents merged (internal/fanout.MergeDocs): every section a table whose rows lead with
// a "context" key, a card a row per context; that form is the document's fan-out schema
// (FanOutSchema, docs/schema/<command>.fanout.json).
package contract

import (
	"reflect"
	"slices"

	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/replica"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Shape is how a section prints.
type Shape int

// The shapes of a section.
const (
	Table       Shape = iota // an array of rows
	Card                     // one object
	CardOrTable              // a card for one row, a table for several (inspect shard in the control silo without --cell)
)

// Section is one section of a document: its name (the key when the document has several),
// its shape, and its row's Go type (several when the command prints one of them: shards
// prints a TopShardsRow or a StuckShardsRow listing). Optional sections are printed only
// sometimes.
type Section struct {
	Name     string
	Shape    Shape
	Rows     []reflect.Type
	Optional bool
}

// Document is the JSON document of one command.
type Document struct {
	Command  string // as typed: "inspect shard"
	About    string
	Sections []Section
	// Or is the command's other form's sections (a repair's bulk form: its summary and
	// shards), nil when it has one form.
	Or []Section
	// FanOut: the command reads over several contexts at once and prints their documents
	// merged (FanOutSchema).
	FanOut bool
}

// bulk are the sections of a bulk repair's document (reschedule, compact, skip with
// selector flags): the summary card and a row per shard.
var bulk = []Section{
	{Name: "summary", Shape: Card, Rows: []reflect.Type{row[drain.BulkCard]()}},
	{Name: "shards", Shape: Table, Rows: []reflect.Type{row[drain.BulkShardRow]()}, Optional: true},
}

func row[T any]() reflect.Type { return reflect.TypeFor[T]() }

// listing is the row of a report table made from statement rows T (report.DocumentRow).
func listing[T any](state bool) reflect.Type { return report.DocumentRow(row[T](), state) }

// withNext is row t followed by the fields of report.NextSteps, which the inspect commands
// end a card with (report.WithNext) when they can work out what to run next.
func withNext(t reflect.Type) reflect.Type {
	next := reflect.TypeFor[report.NextSteps]()
	fields := make([]reflect.StructField, 0, t.NumField()+next.NumField())
	for i := range t.NumField() {
		fields = append(fields, t.Field(i))
	}
	for i := range next.NumField() {
		fields = append(fields, next.Field(i))
	}
	return reflect.StructOf(fields)
}

// Documents are the documents of every command with JSON output, in the order of the
// command reference.
func Documents() []Document {
	return []Document{
		{Command: "depth", FanOut: true, About: "The total (category null) and each category's depth.",
			Sections: []Section{{Name: "depth", Shape: Table, Rows: []reflect.Type{listing[query.DepthRow](false), row[query.MailboxDepthRow]()}}}},
		{Command: "shards", FanOut: true, About: "The deepest shards (or, with --stuck, the shards in backoff), each with its state.",
			Sections: []Section{{Name: "shards", Shape: Table, Rows: []reflect.Type{listing[query.TopShardsRow](true), listing[query.StuckShardsRow](true), listing[query.TopShardsSampleRow](false)}}}},
		{Command: "inspect shard", About: "One shard: its state (a row per cell in the control silo without --cell), its categories and its messages.",
			Sections: []Section{
				{Name: "shard", Shape: CardOrTable, Rows: []reflect.Type{withNext(listing[query.ShardStateRow](true))}},
				{Name: "categories", Shape: Table, Rows: []reflect.Type{listing[query.ShardCategoryRow](false)}},
				{Name: "messages", Shape: Table, Rows: []reflect.Type{listing[query.ShardMessageRow](false)}, Optional: true},
			}},
		{Command: "inspect object", FanOut: true, About: "One object's outboxes, newest first.",
			Sections: []Section{{Name: "outboxes", Shape: Table, Rows: []reflect.Type{listing[query.ObjectOutboxRow](false)}}}},
		{Command: "inspect category", FanOut: true, About: "One category's pending rows per scope.",
			Sections: []Section{{Name: "category", Shape: Table, Rows: []reflect.Type{listing[query.CategoryDepthRow](false), listing[query.CategoryEstimateRow](false)}}}},
		{Command: "inspect message", FanOut: true, About: "One message with its coalesce group and shard.",
			Sections: []Section{{Name: "message", Shape: Card, Rows: []reflect.Type{withNext(listing[query.MessageRow](false))}}}},
		{Command: "mailboxes", About: "The webhook payload mailboxes (hybridcloud_webhookpayload), blocked longest first.",
			Sections: []Section{{Name: "mailboxes", Shape: Table, Rows: []reflect.Type{row[mailbox.ListRow]()}}}},
		{Command: "inspect mailbox", About: "One webhook mailbox: its head with its attempts, the head's request (secrets redacted unless --show-secrets), the payloads behind it.",
			Sections: []Section{
				{Name: "head", Shape: Card, Rows: []reflect.Type{withNext(row[mailbox.HeadCard]())}},
				{Name: "request", Shape: Card, Rows: []reflect.Type{row[mailbox.Request]()}},
				{Name: "behind", Shape: Table, Rows: []reflect.Type{row[mailbox.PayloadRow]()}},
			}},
		{Command: "killswitch list", FanOut: true, About: "Which options table Sentry reads for each outbox, the disabled shards and what waits behind them, the backfill gates.",
			Sections: []Section{
				{Name: "stores", Shape: Table, Rows: []reflect.Type{row[killswitch.StoreRow]()}},
				{Name: "disabled", Shape: Table, Rows: []reflect.Type{row[killswitch.DisabledRow]()}},
				{Name: "backfill_gates", Shape: Table, Rows: []reflect.Type{row[killswitch.GateRow]()}},
			}},
		{Command: "killswitch check", FanOut: true, About: "Whether one shard is disabled, in each options table and in the one Sentry reads, and what waits in it (when the outbox table is present).",
			Sections: []Section{
				{Name: "killswitch", Shape: Card, Rows: []reflect.Type{row[killswitch.CheckCard]()}},
				{Name: "waiting", Shape: Table, Rows: []reflect.Type{listing[query.ShardDepthRow](false)}, Optional: true},
			}},
		{Command: "killswitch add", About: "The kill-switch list after the change.",
			Sections: []Section{{Name: "killswitch", Shape: Card, Rows: []reflect.Type{row[killswitch.ChangeSummary]()}}}},
		{Command: "killswitch remove", About: "The kill-switch list after the change.",
			Sections: []Section{{Name: "killswitch", Shape: Card, Rows: []reflect.Type{row[killswitch.ChangeSummary]()}}}},
		{Command: "killswitch gate", About: "The backfill gate's option after the change.",
			Sections: []Section{{Name: "gate", Shape: Card, Rows: []reflect.Type{row[killswitch.GateSummary]()}}}},
		{Command: "reschedule", About: "What reschedule changed (rows null and in_doubt set when its COMMIT got no answer).",
			Sections: []Section{{Name: "reschedule", Shape: Card, Rows: []reflect.Type{row[drain.RescheduleSummary](), row[mailbox.RescheduleSummary]()}}}, Or: bulk},
		{Command: "compact", About: "What compact archived and deleted.",
			Sections: []Section{{Name: "compact", Shape: Card, Rows: []reflect.Type{row[drain.CompactSummary]()}}}, Or: bulk},
		{Command: "skip", About: "What skip archived and deleted.",
			Sections: []Section{{Name: "skip", Shape: Card, Rows: []reflect.Type{row[drain.SkipSummary](), row[mailbox.SkipSummary]()}}}, Or: bulk},
		{Command: "restore", About: "What restore put back.",
			Sections: []Section{{Name: "restore", Shape: Card, Rows: []reflect.Type{row[drain.RestoreSummary]()}}}},
		{Command: "drain", About: "The drain's summary.",
			Sections: []Section{{Name: "drain", Shape: Card, Rows: []reflect.Type{row[drain.Summary]()}}}, Or: []Section{
				{Name: "summary", Shape: Card, Rows: []reflect.Type{row[drain.ParallelCard]()}},
				{Name: "shards", Shape: Table, Rows: []reflect.Type{row[drain.ParallelShardRow]()}},
			}},
		{Command: "backfill status", FanOut: true, About: "Each replicated table's backfill cursor and state.",
			Sections: []Section{{Name: "backfill", Shape: Table, Rows: []reflect.Type{row[status.TableRow]()}}}},
		{Command: "doctor", FanOut: true, About: "The findings, most severe first.",
			Sections: []Section{{Name: "findings", Shape: Table, Rows: []reflect.Type{row[doctor.FindingRow]()}}}},
		{Command: "enums list", About: "The categories, the scopes, or both (enums list categories|scopes).",
			Sections: []Section{
				{Name: "categories", Shape: Table, Rows: []reflect.Type{row[report.CategoryRow]()}, Optional: true},
				{Name: "scopes", Shape: Table, Rows: []reflect.Type{row[report.ScopeRow]()}, Optional: true},
			}},
		{Command: "enums resolve", About: "What a name or an integer resolves to.",
			Sections: []Section{{Name: "resolved", Shape: Table, Rows: []reflect.Type{row[report.ResolvedRow]()}}}},
		{Command: "enums lint", About: "The problems found in an enums file.",
			Sections: []Section{{Name: "problems", Shape: Table, Rows: []reflect.Type{row[report.ProblemRow]()}}}},
		{Command: "verify", About: "A summary per replication pair, then the drifted objects (missing, stale, orphan, pending).",
			Sections: []Section{
				{Name: "summary", Shape: Table, Rows: []reflect.Type{row[replica.PairRow]()}},
				{Name: "drift", Shape: Table, Rows: []reflect.Type{row[replica.DriftRow]()}},
			}},
		{Command: "replicate", About: "The outbox rows replicate wrote, per pair, and the verify that follows them.",
			Sections: []Section{{Name: "replicate", Shape: Table, Rows: []reflect.Type{row[replica.WrittenRow]()}}}},
		{Command: "version", About: "The release and the commit it was built from.",
			Sections: []Section{{Name: "version", Shape: Card, Rows: []reflect.Type{row[report.Version]()}}}},
		{Command: "context list", About: "The contexts of the config file.",
			Sections: []Section{{Shape: Table, Rows: []reflect.Type{row[config.ContextRow]()}}}},
		{Command: "context show", About: "What a context resolves to, one setting a row with its source.",
			Sections: []Section{{Shape: Table, Rows: []reflect.Type{row[config.Setting]()}}}},
	}
}

// Lookup is the document of command (as typed: "inspect shard"), false when it prints none.
func Lookup(command string) (Document, bool) {
	for _, d := range Documents() {
		if d.Command == command {
			return d, true
		}
	}
	return Document{}, false
}

// Fields are the JSON keys a row or card of the document can have, in either form: what
// --json may select.
func (d Document) Fields() []string {
	var out []string
	for _, s := range append(append([]Section(nil), d.Sections...), d.Or...) {
		for _, t := range s.Rows {
			for _, k := range render.JSONKeys(t) {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}
