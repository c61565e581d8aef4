// Package backfill models Sentry's outbox backfill (reference §6): which tables replicate,
// the version each table's code is at, how the options gate it, and where its cursor stands.
// It computes states from what commands read; it reads and prints nothing itself.
package backfill

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Silo is the side of Sentry a replicated table lives on; its cursor lives in that side's
// watermark table and its gate in that side's options table.
type Silo string

// The two silos.
const (
	Cell    Silo = "cell"
	Control Silo = "control"
)

// Table is one replicated table.
type Table struct {
	Name  string
	Silo  Silo
	Coded int64 // the model's replication_version in code
	// Unregistered is true for a table found only through its cursor.
	Unregistered bool
}

// registered lists the tables with an outbox_replication.<table>.replication_version option
// (src/sentry/hybridcloud/options.py, reference §5.3) and their coded versions (§6.3: the
// models with a version above 1). The silo of each follows its model's silo decorator: it
// picks which watermark and options table is read first; the other is read as a fallback.
var registered = []Table{ //nolint:gochecknoglobals // constant table
	{Name: "auth_authenticator", Silo: Control, Coded: 1},
	{Name: "auth_user", Silo: Control, Coded: 2},
	{Name: "sentry_apikey", Silo: Control, Coded: 3},
	{Name: "sentry_apitoken", Silo: Control, Coded: 1},
	{Name: "sentry_authidentity", Silo: Control, Coded: 2},
	{Name: "sentry_authprovider", Silo: Control, Coded: 1},
	{Name: "sentry_externalactor", Silo: Cell, Coded: 1},
	{Name: "sentry_organization", Silo: Cell, Coded: 4},
	{Name: "sentry_organizationavatar", Silo: Cell, Coded: 1},
	{Name: "sentry_organizationintegration", Silo: Control, Coded: 1},
	{Name: "sentry_organizationmember", Silo: Cell, Coded: 1},
	{Name: "sentry_organizationmember_teams", Silo: Cell, Coded: 1},
	{Name: "sentry_organizationslugreservation", Silo: Control, Coded: 1},
	{Name: "sentry_orgauthtoken", Silo: Control, Coded: 1},
	{Name: "sentry_projectkey", Silo: Cell, Coded: 1},
	{Name: "sentry_sentryappinstallation", Silo: Control, Coded: 1},
	{Name: "sentry_sentryappinstallationtoken", Silo: Control, Coded: 1},
	{Name: "sentry_team", Silo: Cell, Coded: 1},
	{Name: "sentry_useremail", Silo: Control, Coded: 1},
	{Name: "sentry_userpermission", Silo: Control, Coded: 1},
	{Name: "sentry_userrole", Silo: Control, Coded: 1},
	{Name: "sentry_userrole_users", Silo: Control, Coded: 1},
}

// Registered returns the replicated tables, by name, with overrides (--coded TABLE=N)
// applied; an override for a table not in the list adds it.
func Registered(overrides map[string]int64) []Table {
	out := append([]Table(nil), registered...)
	for name, v := range overrides {
		found := false
		for i := range out {
			if out[i].Name == name {
				out[i].Coded, found = v, true
			}
		}
		if !found {
			out = append(out, Table{Name: name, Silo: Cell, Coded: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a registered table.
func Lookup(tables []Table, name string) (Table, bool) {
	for _, t := range tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

// ParseCoded reads --coded TABLE=N.
func ParseCoded(specs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, s := range specs {
		name, v, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		if err := CheckName("table", name); err != nil {
			return nil, fmt.Errorf("invalid `--coded`: %w", err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || name == "" || err != nil || n < 1 {
			return nil, fmt.Errorf("invalid `--coded` %q: want TABLE=VERSION with a version of at least 1", s)
		}
		out[name] = n
	}
	return out, nil
}

// CheckName refuses a name (a table, a Redis key or key prefix) that holds a control
// character or is not UTF-8: such a name is never Sentry's, and in a printed script a
// newline would end the comment or line it is placed in. Tables are also held to
// PostgreSQL's 63-byte identifier limit. The error quotes the name escaped.
func CheckName(kind, name string) error {
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("%s name %q is not valid UTF-8", kind, name)
	case strings.IndexFunc(name, textsafe.IsControl) >= 0:
		return fmt.Errorf("%s name %q holds a control character", kind, name)
	case kind == "table" && len(name) > 63:
		return fmt.Errorf("table name %q is longer than PostgreSQL's 63-byte limit", name)
	}
	return nil
}

// OptionKey is the option gating a table's backfill.
func OptionKey(table string) string { return "outbox_replication." + table + ".replication_version" }

// TargetCellsKey is a control table's option listing the cells its backfill writes outbox
// rows for (PR #118410, Jun 2026; reference §10.3): unset, every cell.
func TargetCellsKey(table string) string {
	return "outbox_replication." + table + ".backfill.target_cells"
}

// Cursor is a stored (low_bound, version).
type Cursor struct {
	Low     int64
	Version int64
}

// ParseRedisCursor reads the Redis value: the JSON array [low, version] and nothing else
// (Sentry's json.loads would refuse trailing text too).
func ParseRedisCursor(raw string) (Cursor, error) {
	var v []any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || len(v) != 2 {
		return Cursor{}, errors.New("not a JSON [low, version] pair")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Cursor{}, errors.New("text after the JSON [low, version] pair")
	}
	low, ok1 := v[0].(json.Number)
	ver, ok2 := v[1].(json.Number)
	if !ok1 || !ok2 {
		return Cursor{}, errors.New("not a pair of integers")
	}
	l, err1 := low.Int64()
	n, err2 := ver.Int64()
	if err1 != nil || err2 != nil {
		return Cursor{}, errors.New("not a pair of integers")
	}
	return Cursor{Low: l, Version: n}, nil
}

// State is what a table's backfill is doing.
type State string

// The states.
const (
	StateNotStarted State = "not started"               // no cursor yet: Sentry stores (0, 1) on its first read
	StateInProgress State = "in progress"               // walking at the target version
	StateComplete   State = "complete"                  // stored version above the coded one: done
	StateSkipped    State = "complete, version skipped" // done, but at a version below the coded one, which will never run
	StateGated      State = "gated by option"           // the option holds the target below the coded version
	StatePending    State = "new version pending"       // stored version below the target: restarts from 0
	StateBeyondMax  State = "cursor beyond max(id)"
	StateMalformed  State = "malformed cursor"
	StateUnknown    State = "unknown"
)

// Input is what Classify needs to know about one table.
type Input struct {
	Table Table
	// Option is the gating option's value; nil when unset (Sentry's default is 0).
	Option *int64
	// SelfHosted bypasses the option (force_synchronous): the target is the coded version.
	SelfHosted bool
	Cursor     *Cursor
	// CursorErr is set when the stored cursor could not be read.
	CursorErr error
	// MaxID is the table's highest id; nil when the table is empty or not in this database.
	MaxID *int64
	// OptionUpdated and CursorUpdated are the option's last_updated and the watermark's
	// date_updated; zero when not known (an unset option, a Redis cursor).
	OptionUpdated, CursorUpdated time.Time
}

// Status is a table's classified backfill.
type Status struct {
	State  State
	Target int64 // the effective target version
	// Complete is true when nothing is left to do at the current target.
	Complete bool
	// Walked is the version a completed walk ran at, when the stored state tells it; nil
	// when it cannot (see Classify).
	Walked *int64
	Note   string
}

// Target is find_replication_version: min(option, coded), or coded when self-hosted.
func Target(in Input) int64 {
	if in.SelfHosted {
		return in.Table.Coded
	}
	opt := int64(0)
	if in.Option != nil {
		opt = *in.Option
	}
	return min(opt, in.Table.Coded)
}

// Classify follows _chunk_processing_batch: a stored version above the target skips the
// table; below it restarts the walk from 0 at the target; equal continues from the cursor.
func Classify(in Input) Status {
	target := Target(in)
	st := Status{Target: target}
	switch {
	case in.CursorErr != nil:
		st.State, st.Note = StateMalformed, in.CursorErr.Error()
		return st
	case in.Cursor == nil:
		// get_processing_state stores (0, 1) on its first read.
		c := Cursor{Low: 0, Version: 1}
		if c.Version > target {
			st.State, st.Complete = StateGated, false
			st.Note = fmt.Sprintf("option %s is %d, below the coded version %d: nothing runs until it is raised", OptionKey(in.Table.Name), target, in.Table.Coded)
			return st
		}
		st.State, st.Note = StateNotStarted, "no cursor yet; Sentry stores (0, 1) on its first read"
		return st
	}
	c := *in.Cursor
	switch {
	case c.Version > target && c.Version > in.Table.Coded:
		classifyComplete(in, c, &st)
	case c.Version > target:
		st.State = StateGated
		st.Note = fmt.Sprintf("stored version %d is above the target %d (option below the coded version %d): skipped until the option is raised", c.Version, target, in.Table.Coded)
	case c.Version < target:
		st.State = StatePending
		st.Note = fmt.Sprintf("stored version %d is below the target %d: the next batch restarts from 0 at version %d", c.Version, target, target)
	case in.MaxID != nil && c.Low > *in.MaxID+1:
		st.State = StateBeyondMax
		st.Note = fmt.Sprintf("low bound %d is past the table's max(id) %d: the next batch finds no rows and marks the table complete without replicating anything", c.Low, *in.MaxID)
	case c.Low == 0:
		st.State, st.Note = StateInProgress, "at version "+strconv.FormatInt(c.Version, 10)+", starting from the first id"
	default:
		st.State = StateInProgress
	}
	return st
}

// classifyComplete reads a completed walk. Completion stores (0, coded + 1) whatever target
// the walk ran at (reference §6.1), so the stored version tells the coded version then (v-1)
// but not the target. The target was min(option then, v-1), or v-1 self-hosted; the option
// then is the option now only if it was last updated before the watermark was. When that
// target was below v-1, version v-1's walk was skipped: a stored version above any future
// target at this code means it never runs, and raising the option does not start it.
func classifyComplete(in Input, c Cursor, st *Status) {
	st.State, st.Complete = StateComplete, true
	codedThen := c.Version - 1
	optionKnown := in.Option != nil && !in.OptionUpdated.IsZero() && !in.CursorUpdated.IsZero() && !in.OptionUpdated.After(in.CursorUpdated)
	switch {
	case in.SelfHosted:
		st.Walked = &codedThen
	case optionKnown:
		w := min(*in.Option, codedThen)
		st.Walked = &w
	}
	switch {
	case st.Walked != nil && *st.Walked < codedThen:
		st.State, st.Complete = StateSkipped, false
		st.Note = fmt.Sprintf("the walk ran at version %d (option %d, unchanged since it finished) but stored %d = coded %d + 1: version %d's walk will never run; raising the option does not start it (only a new coded version or resetting the cursor to (0, %d) does)",
			*st.Walked, *in.Option, c.Version, codedThen, codedThen, codedThen)
	case st.Walked == nil && Target(in) < codedThen:
		st.Note = fmt.Sprintf("the walk's version is not stored: if the option was already %d when it finished, it ran at version %d and version %d's walk will never run (raising the option does not start it)",
			Target(in), Target(in), codedThen)
	case st.Walked == nil:
		st.Note = fmt.Sprintf("the walk's version is not stored: %d, or lower if the option was below %d when it finished", codedThen, codedThen)
	}
}

// Gate is the one answer to "is this table's backfill gated?", shared by backfill status,
// killswitch list and the doctor (and the exporter's backfill_gated): the option Sentry reads
// for the table's silo holds the target (find_replication_version) below the coded version.
// An unset option is Sentry's default 0, which gates every table; self-hosted Sentry ignores
// the options, so nothing is gated there. Whether the walk has finished is the state's
// business (Classify), not the gate's: a finished walk behind a held gate stays gated (a
// new coded version would wait for the option).
type Gate struct {
	Held bool
	// Default is true when the option is unset: Sentry's default 0 holds it.
	Default bool
	// Value is the option's value (0 when unset), Target the effective target.
	Value, Target, Coded int64
}

// GateOf judges the gate of one table from its option (in.Option, in.SelfHosted).
func GateOf(in Input) Gate {
	g := Gate{Target: Target(in), Coded: in.Table.Coded, Default: in.Option == nil}
	if in.Option != nil {
		g.Value = *in.Option
	}
	g.Held = !in.SelfHosted && g.Target < g.Coded
	return g
}

// Select is every table of all, or the ones named in order; unknown is the first name all
// does not hold (the operator's to fix: --coded registers it).
func Select(all []Table, names []string) (selected []Table, unknown string) {
	if len(names) == 0 {
		return all, ""
	}
	for _, name := range names {
		t, ok := Lookup(all, name)
		if !ok {
			return nil, name
		}
		selected = append(selected, t)
	}
	return selected, ""
}
