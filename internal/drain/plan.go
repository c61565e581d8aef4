package drain

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Request is what the operator asked a drain for, as its plan describes it.
type Request struct {
	Mode Mode
	// Handler is the --handler spec ("" for a dry run without one); the plan redacts it.
	Handler string
	Reason  string
	Follow  bool
	// HeaderNames are the --handler-header names (their values are never shown).
	HeaderNames []string
	MaxMessages int
	Rate        float64
}

// Discard says whether the request deletes without delivering (--handler discard).
func (q Request) Discard() bool { return q.Handler == "discard" }

// PlanCategory is one category of the shard as the plan counts it: each count up to
// query.PlanCap, the *AtLeast flags set when it stopped there.
type PlanCategory struct {
	Category        int    `json:"category"`
	Name            string `json:"category_name"`
	Messages        int64  `json:"messages"` // coalesce groups: one delivery each
	MessagesAtLeast bool   `json:"messages_at_least"`
	Rows            int64  `json:"rows"`
	RowsAtLeast     bool   `json:"rows_at_least"`
}

// Plan is what a drain learned before asking: the shard's size by category, the watermark
// the drain stops at, and whether the kill switch disables the shard.
type Plan struct {
	Shard string `json:"shard"`
	// Watermark bounds which groups are visited (0 with --follow: none).
	Watermark int64 `json:"watermark"`
	Empty     bool  `json:"empty"`
	// Messages and Rows sum the categories' counts; the *AtLeast flags say one of them
	// stopped at the cap, so the sum is a lower bound.
	Messages        int64          `json:"messages"`
	MessagesAtLeast bool           `json:"messages_at_least"`
	Rows            int64          `json:"rows"`
	RowsAtLeast     bool           `json:"rows_at_least"`
	Categories      []PlanCategory `json:"categories"`
	// Killswitched is nil when there is no options table to read.
	Killswitched *bool `json:"killswitched"`
	// PayloadType is the payload column's type, recorded in a discard's archive.
	PayloadType string `json:"-"`
	// lines are the plan as the confirmation shows it.
	lines []string
}

// Disabled says whether the kill switch disables the shard.
func (p Plan) Disabled() bool { return p.Killswitched != nil && *p.Killswitched }

// Lines are the plan as the operator confirms it.
func (p Plan) Lines() []string { return p.lines }

// categoryRow is one row of query.DrainPlanCategories.
type categoryRow struct {
	Category      int   `db:"category"`
	Depth         int64 `db:"depth"`
	DepthAtLeast  bool  `db:"depth_at_least"`
	Groups        int64 `db:"coalesce_groups"`
	GroupsAtLeast bool  `db:"groups_at_least"`
}

// ReadPlan reads, in the caller's read-only snapshot tx, shard k's categories and highest
// id, and describes what req would do with them. killswitched is the kill switch's verdict
// (nil: no options table); categoryName names a category.
//
// The counts stop at query.PlanCap a category, rows and groups alike, labelled "at least"
// past it: the plan is read before the claim, so an exact count of a 2M-row shard (seconds,
// once Sentry's claims have left its pages to the heap) delayed the first delivery by what
// the shard holds (#27). inspect shard counts them all.
func ReadPlan(ctx context.Context, tx pgx.Tx, t query.Target, k query.ShardKey, req Request, killswitched *bool, categoryName func(int) string) (Plan, error) {
	p := Plan{Shard: fmt.Sprintf("%s/%d", k.Scope.Name, k.ID), Killswitched: killswitched}
	// The categories alone: the plan shows them, and none means an empty shard (the state's
	// head row would say no more).
	st := query.DrainPlanCategories(t, k)
	res, err := query.Run(ctx, tx, st)
	if err != nil {
		return p, db.Classify(err, st.Name)
	}
	if p.Watermark, err = MaxID(ctx, tx, t, k); err != nil {
		return p, db.Classify(err, "shard-max-id")
	}
	if len(res.Rows) == 0 {
		p.Empty = true
		return p, nil
	}
	cats, err := query.Rows[categoryRow](res)
	if err != nil {
		return p, err
	}
	for _, c := range cats {
		p.Rows += c.Depth
		p.Messages += c.Groups
		p.RowsAtLeast = p.RowsAtLeast || c.DepthAtLeast
		p.MessagesAtLeast = p.MessagesAtLeast || c.GroupsAtLeast
		p.Categories = append(p.Categories, PlanCategory{Category: c.Category, Name: categoryName(c.Category),
			Messages: c.Groups, MessagesAtLeast: c.GroupsAtLeast, Rows: c.Depth, RowsAtLeast: c.DepthAtLeast})
	}
	bound := fmt.Sprintf("groups with a row up to id %d, each delivered with its newest row (groups that only appear later stay; --follow drains them too)", p.Watermark)
	if req.Follow {
		bound, p.Watermark = "every row, including rows inserted while draining (--follow)", 0
	}
	p.lines = p.describe(t, req, bound)
	return p, nil
}

// describe is the plan's lines.
func (p Plan) describe(t query.Target, req Request, bound string) []string {
	lines := []string{
		fmt.Sprintf("drain shard %s of %s in %s mode through %s (%s)", p.Shard, t.Describe(), req.Mode, HandlerName(req.Handler), ReasonText(req.Reason)),
		fmt.Sprintf("deliver %s message(s) (coalesce groups) and delete %s row(s); %s", PlanCount(p.Messages, p.MessagesAtLeast, "about "), PlanCount(p.Rows, p.RowsAtLeast, ""), bound),
	}
	if p.RowsAtLeast || p.MessagesAtLeast {
		lines = append(lines, fmt.Sprintf("  (each category's rows and messages counted up to %d: the plan is read before the claim; inspect shard counts them all)", query.PlanCap))
	}
	for _, c := range p.Categories {
		lines = append(lines, fmt.Sprintf("  %s: %s message(s) from %s row(s)", c.Name, PlanCount(c.Messages, c.MessagesAtLeast, ""), PlanCount(c.Rows, c.RowsAtLeast, "")))
	}
	if len(req.HeaderNames) > 0 {
		lines = append(lines, "handler headers: "+strings.Join(req.HeaderNames, ", ")+" (values not shown)")
	}
	if req.MaxMessages > 0 {
		lines = append(lines, fmt.Sprintf("stop after %d message(s)", req.MaxMessages))
	}
	if req.Rate > 0 {
		lines = append(lines, fmt.Sprintf("at most %g message(s) per second", req.Rate))
	}
	switch {
	case p.Killswitched == nil:
		lines = append(lines, "kill switch: unknown (no options table)")
	case *p.Killswitched:
		lines = append(lines, "kill switch: the shard is disabled; --ignore-killswitch delivers it anyway")
	}
	if req.Discard() {
		lines = append(lines, "discard: nothing is delivered; every deleted row is archived first")
	}
	return lines
}

// PlanCount is a count of the plan as its lines show it: "at least n" when it stopped at
// the cap, else n after exact's word ("about " for the messages: rows inserted meanwhile may
// join a group or start one).
func PlanCount(n int64, atLeast bool, exact string) string {
	if atLeast {
		return fmt.Sprintf("at least %d", n)
	}
	return exact + strconv.FormatInt(n, 10)
}

// HandlerName is a --handler spec as plans, summaries and audit lines show it: its URL's
// secrets redacted.
func HandlerName(spec string) string {
	if spec == "" {
		return "(no handler: dry run)"
	}
	return RedactURL(spec)
}

// ReasonText is a --reason as a plan line shows it.
func ReasonText(r string) string {
	if strings.TrimSpace(r) == "" {
		return "no reason given"
	}
	return "reason: " + r
}

// maxIDRow is query.ShardMaxID's row.
type maxIDRow struct {
	ID int64 `db:"max_id"`
}

// MaxID is the shard's highest id (0 when empty): the watermark a drain or a repair stops at.
func MaxID(ctx context.Context, tx pgx.Tx, t query.Target, k query.ShardKey) (int64, error) {
	res, err := query.Run(ctx, tx, query.ShardMaxID(t, k))
	if err != nil {
		return 0, err
	}
	rows, err := query.Rows[maxIDRow](res)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return rows[0].ID, nil
}

// After is a shard's state after a drain; a field that could not be read is "unknown".
type After struct {
	Left, NextAttempt, Delay any
}

// UnknownAfter is the state after a drain when it could not be read.
func UnknownAfter() After { return After{Left: "unknown", NextAttempt: "unknown", Delay: "unknown"} }

// AfterState is the state after a drain of a shard holding depth rows whose next attempt is
// next (a time, or NULL when empty), at now.
func AfterState(depth int64, next any, now time.Time) After {
	a := After{Left: depth, NextAttempt: next, Delay: "none (empty)"}
	if tm, isTime := next.(time.Time); isTime {
		a.NextAttempt = tm
		if d := tm.Sub(now).Round(time.Second); d > 0 {
			a.Delay = d.String()
		} else {
			a.Delay = "due now"
		}
	}
	return a
}

// Summary is what a drain did and what it left: the drain's document.
type Summary struct {
	Shard     string `json:"shard"`
	Delivered int64  `json:"delivered"`
	// Deleted is nil (JSON null) while a COMMIT that got no answer could not be settled:
	// never the count without it.
	Deleted               Count   `json:"deleted"`
	Left                  any     `json:"left"`
	NextAttempt           any     `json:"next_attempt"`
	Delay                 any     `json:"delay"`
	Seconds               float64 `json:"seconds"`
	DeliveredNotCommitted int64   `json:"delivered_not_committed,omitempty"`
	// InDoubt is what the settle of a COMMIT that got no answer found (Settlement), and
	// DeliveredInDoubt how many messages it held while it is still in doubt.
	InDoubt          string  `json:"in_doubt,omitempty"`
	DeliveredInDoubt int64   `json:"delivered_in_doubt,omitempty"`
	Stopped          string  `json:"stopped,omitempty"`
	FailedMessage    *int64  `json:"failed_message,omitempty"`
	FailedCategory   *string `json:"failed_category,omitempty"`
	AbandonedMessage *int64  `json:"abandoned_message,omitempty"`
	Schedule         string  `json:"schedule,omitempty"`
	// Next are the commands to run next (set by the command, which knows the invocation).
	Next render.Commands `json:"next,omitempty"`
}

// Summarize is the summary of res, a drain of shard k that took elapsed, with the state it
// left; restored says the claim's schedule was put back (the handler was unavailable).
func Summarize(k query.ShardKey, res Result, after After, restored bool, elapsed time.Duration) Summary {
	s := Summary{Shard: fmt.Sprintf("%s/%d", k.Scope.Name, k.ID), Delivered: int64(res.Delivered), Deleted: Count{N: &res.Deleted},
		Left: after.Left, NextAttempt: after.NextAttempt, Delay: after.Delay, Seconds: float64(elapsed.Milliseconds()) / 1000,
		DeliveredNotCommitted: int64(res.Uncommitted)}
	if d := res.InDoubt; d != nil {
		s.InDoubt = string(d.Outcome)
		if d.Outcome == Unsettled {
			s.Deleted, s.DeliveredInDoubt = Count{}, int64(d.Messages)
		}
	}
	if res.Contended {
		s.Stopped = "another drainer holds the shard"
	}
	if res.Failed != nil {
		s.FailedMessage, s.FailedCategory = &res.Failed.ID, &res.Failed.CategoryName
	}
	if res.Abandoned != nil {
		s.AbandonedMessage = &res.Abandoned.ID
	}
	if restored {
		s.Schedule = "restored to what it was before the claim (the handler was unavailable)"
	}
	return s
}

// Card is the summary as the printer's card: the fields in the order of Summary's, those
// left out of its JSON (omitempty) left out here too (render.FieldsOf).
func (s Summary) Card() []render.Field { return render.FieldsOf(s) }

// CountFields are a summary's count (key): n, or when nil (a COMMIT still in doubt) one
// nobody could read: "unknown" to a person, null to a machine (never a 0, which would be a
// lie, nor a string where scripts expect a number).
func CountFields(key string, n *int64) []render.Field {
	if n == nil {
		return []render.Field{{Key: key, Value: "unknown", HumanOnly: true}, {Key: key, Value: nil, MachineOnly: true}}
	}
	return []render.Field{{Key: key, Value: *n}}
}
