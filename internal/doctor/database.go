package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// Vacuum thresholds beyond the autovacuum trigger itself.
const (
	// DeadCritFactor: dead tuples past this many times the trigger are critical.
	DeadCritFactor = 10
	// BloatMinBytes and BloatBytesPerRow: a table (heap + indexes) larger than BloatMinBytes
	// that spends more than BloatBytesPerRow per live row is mostly dead space.
	BloatMinBytes    = 64 << 20
	BloatBytesPerRow = 8 << 10
	// LockCritWait: a session waiting longer than this on an outbox lock is critical.
	LockCritWait = time.Minute
	// ReplicaWarnLag and ReplicaCritLag grade a standby's replay lag.
	ReplicaWarnLag = time.Minute
	ReplicaCritLag = 15 * time.Minute
)

// reloption reads one key=value of a table's reloptions.
func reloption(opts []any, key string) (string, bool) {
	for _, o := range opts {
		s, _ := o.(string)
		if k, v, ok := strings.Cut(s, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "off", "no", "0", "f", "n":
		return true
	}
	return false
}

// checkVacuum: dead tuples against each outbox table's autovacuum trigger, autovacuum off
// (server-wide or on the table), the last (auto)vacuum, and size against live rows.
func checkVacuum(ctx context.Context, env *Env) ([]Finding, error) {
	srv, err := env.serverInfo(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := readRows[query.DoctorTableRow](ctx, env, query.DoctorTables(env.SchemaName, tableNames(env.Targets)))
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, w := range rows {
		out = append(out, env.vacuumFinding(srv, w))
	}
	return out, nil
}

// vacuumFinding grades one table; statistics the server has none of read as 0, and a table
// never vacuumed has no last vacuum.
func (env *Env) vacuumFinding(srv *serverInfo, w query.DoctorTableRow) Finding {
	opts := w.RelOptions
	threshold, scale := float64(srv.VacThreshold), srv.VacScale
	if v, ok := reloption(opts, "autovacuum_vacuum_threshold"); ok {
		threshold, _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := reloption(opts, "autovacuum_vacuum_scale_factor"); ok {
		scale, _ = strconv.ParseFloat(v, 64)
	}
	tableOn := true
	if v, ok := reloption(opts, "autovacuum_enabled"); ok && isFalse(v) {
		tableOn = false
	}
	table := w.TableName
	trigger := threshold + scale*max(w.RelTuples, 0)
	dead, live := query.Deref(w.DeadTuples), query.Deref(w.LiveTuples)
	size := w.HeapBytes + w.IndexBytes
	lastVac := latest(query.Deref(w.LastVacuum), query.Deref(w.LastAutovacuum))
	f := Finding{Check: CheckVacuum, Evidence: Evidence{
		{"table", table}, {"n_dead_tup", dead}, {"autovacuum_trigger", int64(trigger)}, {"n_live_tup", live},
		{"reltuples", int64(max(w.RelTuples, 0))}, {"autovacuum_server", srv.Autovacuum}, {"autovacuum_table", tableOn},
		{"last_vacuum", nullTime(lastVac)}, {"since_last_vacuum_seconds", sinceSeconds(env.Now, lastVac)},
		{"autovacuum_count", query.Deref(w.AutovacuumCount)}, {"heap_bytes", w.HeapBytes}, {"index_bytes", w.IndexBytes},
		{"bytes_per_live_row", size / max(live, 1)},
	}}
	var why []string
	switch {
	case float64(dead) > trigger*DeadCritFactor:
		f.Severity = Crit
		why = append(why, fmt.Sprintf("%d dead tuples, more than %d× the autovacuum trigger (%d)", dead, DeadCritFactor, int64(trigger)))
		f.Next = query.Suggestion("", query.NextVacuum(env.SchemaName, table))
	case float64(dead) > trigger:
		f.Severity = Warn
		why = append(why, fmt.Sprintf("%d dead tuples, past the autovacuum trigger (%d): autovacuum is lagging or cannot remove them (see the xmin check)", dead, int64(trigger)))
		f.Next = query.Suggestion("", query.NextVacuum(env.SchemaName, table))
	}
	if !tableOn {
		f.Severity = max(f.Severity, Warn)
		why = append(why, "autovacuum is disabled on the table (autovacuum_enabled = false)")
		f.Next = query.Suggestion("", query.NextResetAutovacuum(env.SchemaName, table))
	}
	if !srv.Autovacuum {
		f.Severity = max(f.Severity, Warn)
		why = append(why, "autovacuum is off server-wide")
		if f.Next == "" {
			f.Next = query.Suggestion("", query.NextEnableAutovacuum()...)
		}
	}
	if size > BloatMinBytes && size/max(live, 1) > BloatBytesPerRow {
		f.Severity = max(f.Severity, Warn)
		why = append(why, fmt.Sprintf("%d MiB for %d live rows: mostly dead space (VACUUM FULL or pg_repack, in a quiet hour)", size>>20, live))
	}
	if len(why) == 0 {
		f.Summary = fmt.Sprintf("%s: %d dead tuples, below the autovacuum trigger (%d)", table, dead, int64(trigger))
	} else {
		f.Summary = table + ": " + strings.Join(why, "; ")
	}
	return f
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func sinceSeconds(now, t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return seconds(now.Sub(t))
}

// checkReplica: on a standby, the replay lag, and that repairs must go to the primary.
func checkReplica(ctx context.Context, env *Env) ([]Finding, error) {
	srv, err := env.serverInfo(ctx)
	if err != nil {
		return nil, err
	}
	return []Finding{ReplicaFinding(srv.InRecovery, srv.ReplayLag, srv.ReplayLagBytes, env.Prefix)}, nil
}

// ReplicaFinding grades a server: a primary is ok; a standby is ok while its replay lag is
// under ReplicaWarnLag, a warning under ReplicaCritLag, critical beyond (or unknown).
func ReplicaFinding(inRecovery bool, lagSeconds *float64, lagBytes *int64, prefix string) Finding {
	if !inRecovery {
		return Finding{Check: CheckReplica, Severity: OK, Summary: "primary: repairs can run here",
			Evidence: Evidence{{"in_recovery", false}}}
	}
	f := Finding{Check: CheckReplica, Evidence: Evidence{{"in_recovery", true}, {"replay_lag_seconds", nil}, {"replay_lag_bytes", nil}},
		Next: prefix + " --dsn postgres://USER@PRIMARY:5432/DB doctor"}
	if lagBytes != nil {
		f.Evidence[2].Value = *lagBytes
	}
	tail := "; what you read here lags the primary, and repairs (drain, reschedule, compact, skip, killswitch add/remove/gate) must go to the primary"
	if lagSeconds == nil {
		f.Severity = Warn
		f.Summary = "standby that has replayed no transaction yet" + tail
		return f
	}
	lag := time.Duration(*lagSeconds * float64(time.Second))
	f.Evidence[1].Value = roundTo(*lagSeconds, 1)
	switch {
	case lag >= ReplicaCritLag:
		f.Severity = Crit
	case lag >= ReplicaWarnLag:
		f.Severity = Warn
	}
	f.Summary = fmt.Sprintf("standby, replay lag %s (since the last replayed transaction; an idle primary also shows as lag)%s", dur(*lagSeconds), tail)
	return f
}
