package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// grade rates an age in time (when known) and in transaction ids against the thresholds.
func (c Config) grade(age *time.Duration, xids int64) Severity {
	switch {
	case age != nil && *age >= c.XminCrit, xids >= c.XminCritXids:
		return Crit
	case age != nil && *age >= c.XminWarn, xids >= c.XminWarnXids:
		return Warn
	}
	return OK
}

// checkXmin: what holds the xmin horizon back. While it is held, VACUUM cannot remove the
// outbox rows deleted since, dead tuples pile up, and every claim walks past them.
func checkXmin(ctx context.Context, env *Env) ([]Finding, error) {
	srv, err := env.serverInfo(ctx)
	if err != nil {
		return nil, err
	}
	var out []Finding
	sessions, err := readRows[query.DoctorXminSessionRow](ctx, env, query.DoctorXminSessions(env.Config.Limit))
	if err != nil {
		return nil, err
	}
	for _, w := range sessions {
		if f, ok := env.sessionFinding(srv, w); ok {
			out = append(out, f)
		}
	}
	prepared, err := readRows[query.DoctorPreparedXactRow](ctx, env, query.DoctorPreparedXacts(env.Config.Limit))
	if err != nil {
		return nil, err
	}
	for _, w := range prepared {
		if f, ok := env.preparedFinding(w); ok {
			out = append(out, f)
		}
	}
	slots, err := readRows[query.DoctorReplicationSlotRow](ctx, env, query.DoctorReplicationSlots())
	if err != nil {
		return nil, err
	}
	for _, w := range slots {
		if f, ok := env.slotFinding(w); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = append(out, env.horizonOK(srv, len(sessions), len(prepared), len(slots)))
	}
	return out, nil
}

func (env *Env) horizonOK(srv *serverInfo, sessions, prepared, slots int) Finding {
	f := Finding{Check: CheckXmin, Severity: OK,
		Summary: fmt.Sprintf("nothing holds the xmin horizon past the thresholds (%s or %d xids); the oldest running transaction is %d xids old",
			dur(env.Config.XminWarn.Seconds()), env.Config.XminWarnXids, srv.OldestXidAge),
		Evidence: Evidence{{"oldest_running_xid_age", srv.OldestXidAge}, {"sessions_holding_xmin", sessions},
			{"prepared_transactions", prepared}, {"replication_slots", slots}, {"sees_all_sessions", srv.SeesAllSessions}}}
	if !srv.SeesAllSessions {
		f.Summary += "; " + hiddenNote(srv.Role)
	}
	return f
}

func hiddenNote(role string) string {
	return fmt.Sprintf("other sessions' state and transaction start are hidden from role %s (not a member of pg_read_all_stats), so only their xid age is graded",
		ShellQuote(role))
}

// sessionFinding grades one session holding the horizon; its state, transaction start and
// query are NULL when this role may not see them, and it may have no user or application.
func (env *Env) sessionFinding(srv *serverInfo, w query.DoctorXminSessionRow) (Finding, bool) {
	xids := w.XminAgeXids
	var age *time.Duration
	if w.XactAgeSeconds != nil {
		d := time.Duration(*w.XactAgeSeconds * float64(time.Second))
		age = &d
	}
	sev := env.Config.grade(age, xids)
	if sev == OK {
		return Finding{}, false
	}
	pid := w.PID
	state := query.Deref(w.State)
	app, user := query.Deref(w.ApplicationName), query.Deref(w.Usename)
	who := fmt.Sprintf("pid %d (application %s, user %s)", pid, ShellQuote(app), ShellQuote(user))
	var what string
	switch {
	case w.State == nil:
		what = fmt.Sprintf("holds the xmin horizon %d xids back; %s", xids, hiddenNote(srv.Role))
	case strings.HasPrefix(state, "idle in transaction"):
		what = fmt.Sprintf("is %s: its transaction has been open %s and holds the xmin horizon %d xids back", state, dur(age.Seconds()), xids)
	default:
		what = fmt.Sprintf("(%s) has had its transaction open %s, holding the xmin horizon %d xids back", state, dur(age.Seconds()), xids)
	}
	ev := Evidence{{"pid", pid}, {"application_name", Clean(app)}, {"usename", Clean(user)},
		{"state", query.OrNil(w.State)}, {"backend_type", query.OrNil(w.BackendType)}, {"backend_xid", query.OrNil(w.BackendXid)}, {"backend_xmin", query.OrNil(w.BackendXmin)},
		{"xmin_age_xids", xids}, {"xact_age_seconds", nil}, {"query", nil}}
	if age != nil {
		ev[8].Value = seconds(*age)
	}
	if w.Query != nil {
		ev[9].Value = Clean(truncate(*w.Query, 120))
	}
	return Finding{Check: CheckXmin, Severity: sev, Summary: who + " " + what, Evidence: ev,
		Next: query.Suggestion("rolls its transaction back: ask its owner first", query.NextTerminateBackend(pid))}, true
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// preparedFinding grades one prepared transaction; its owner or database reads as empty
// once dropped.
func (env *Env) preparedFinding(w query.DoctorPreparedXactRow) (Finding, bool) {
	age := time.Duration(w.AgeSeconds * float64(time.Second))
	xids := w.XminAgeXids
	sev := env.Config.grade(&age, xids)
	if sev == OK {
		return Finding{}, false
	}
	gid, owner, database := w.GID, query.Deref(w.Owner), query.Deref(w.Database)
	return Finding{Check: CheckXmin, Severity: sev,
		Summary: fmt.Sprintf("prepared transaction %s (owner %s, database %s) was prepared %s ago and holds the xmin horizon %d xids back, and its locks, until it is committed or rolled back",
			SQLString(gid), ShellQuote(owner), ShellQuote(database), dur(age.Seconds()), xids),
		Evidence: Evidence{{"gid", Clean(gid)}, {"owner", Clean(owner)}, {"database", Clean(database)},
			{"xid", w.Xid}, {"xmin_age_xids", xids}, {"prepared", w.Prepared}, {"age_seconds", seconds(age)}},
		Next: query.Suggestion("in database "+ShellQuote(database)+", once its transaction manager has given up on it", query.NextRollbackPrepared(gid)),
	}, true
}

// slotFinding grades one replication slot: the xmin it holds (a slot holding neither xmin
// reads as age 0) and, inactive, the WAL it keeps.
func (env *Env) slotFinding(w query.DoctorReplicationSlotRow) (Finding, bool) {
	xids := max(query.Deref(w.XminAgeXids), query.Deref(w.CatalogXminAgeXids))
	sev := env.Config.grade(nil, xids)
	active := w.Active
	var why []string
	if w.Xmin != nil || w.CatalogXmin != nil {
		why = append(why, fmt.Sprintf("holds the xmin horizon %d xids back (xmin %v, catalog_xmin %v)", xids, orNone(w.Xmin), orNone(w.CatalogXmin)))
	} else {
		why = append(why, "holds no xmin")
	}
	if !active && w.RestartLSN != nil {
		sev = max(sev, Warn)
		why = append(why, fmt.Sprintf("is inactive and keeps %d MiB of WAL from %s", query.Deref(w.RetainedWALBytes)>>20, *w.RestartLSN))
	}
	if sev == OK {
		return Finding{}, false
	}
	name := w.SlotName
	return Finding{Check: CheckXmin, Severity: sev,
		Summary: fmt.Sprintf("replication slot %s (%s, %s) %s", SQLString(name), w.SlotType, map[bool]string{true: "active", false: "inactive"}[active], strings.Join(why, "; ")),
		Evidence: Evidence{{"slot_name", Clean(name)}, {"slot_type", w.SlotType}, {"active", active}, {"xmin", query.OrNil(w.Xmin)},
			{"catalog_xmin", query.OrNil(w.CatalogXmin)}, {"xmin_age_xids", xids}, {"restart_lsn", query.OrNil(w.RestartLSN)},
			{"retained_wal_bytes", query.OrNil(w.RetainedWALBytes)}},
		Next: query.Suggestion("only if no standby or consumer will use it again", query.NextDropReplicationSlot(name)),
	}, true
}

func orNone(p *string) any {
	if p == nil {
		return "none"
	}
	return *p
}

// checkLocks: sessions waiting on locks of the outbox tables, who blocks them, and the shard
// when the lock is on a row. pg_blocking_pids runs once per waiter, under a short timeout.
func checkLocks(ctx context.Context, env *Env) ([]Finding, error) {
	if _, err := readRows[query.DoctorLockTimeoutRow](ctx, env, query.DoctorLockTimeout(env.Config.LockTimeout)); err != nil {
		return nil, err
	}
	rows, err := readRows[query.DoctorLockWaitRow](ctx, env, query.DoctorLockWaits(env.Targets))
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, w := range rows {
		f, err := env.lockFinding(w)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		out = append(out, Finding{Check: CheckLocks, Severity: OK,
			Summary:  "no session waits on a lock of " + strings.Join(tableNames(env.Targets), " or "),
			Evidence: Evidence{{"waiting_sessions", 0}}})
	}
	return out, nil
}

// lockFinding reports one waiting session; the shard columns are set only when the lock is
// on an outbox row, and the waiter's application and start are gone if it has ended.
func (env *Env) lockFinding(w query.DoctorLockWaitRow) (Finding, error) {
	pid := w.PID
	// A blocker read as pid 0 would send the reader after a session that does not exist.
	blockers, err := query.Int64s(w.BlockedBy)
	if err != nil {
		return Finding{}, fmt.Errorf("doctor-lock-waits, column blocked_by: %w", err)
	}
	f := Finding{Check: CheckLocks, Severity: Warn, Evidence: Evidence{
		{"pid", pid}, {"application_name", Clean(query.Deref(w.ApplicationName))}, {"table", w.TableName},
		{"locktype", w.LockType}, {"mode", w.Mode}, {"blocked_by", blockers}, {"waiting_seconds", nil},
	}}
	if w.WaitingSeconds != nil {
		f.Evidence[6].Value = roundTo(*w.WaitingSeconds, 1)
		if time.Duration(*w.WaitingSeconds*float64(time.Second)) >= LockCritWait {
			f.Severity = Crit
		}
	}
	on := fmt.Sprintf("a %s lock on %s", w.Mode, w.TableName)
	if w.RowID != nil {
		t := env.targetByName(w.TableName)
		cell := query.Deref(w.Cell)
		scope, shard := query.Deref(w.ShardScope), query.Deref(w.ShardIdentifier)
		on = fmt.Sprintf("the row lock of row %d, shard %s of %s", *w.RowID, env.shardName(t, cell, scope, shard), w.TableName)
		f.Evidence = append(f.Evidence, KV{"shard_scope", scope}, KV{"shard_identifier", shard}, KV{"row_id", *w.RowID})
		if t.Control() {
			f.Evidence = append(f.Evidence, KV{"cell", Clean(cell)})
		}
	}
	f.Summary = fmt.Sprintf("pid %d waits for %s, held by pid(s) %s", pid, on, plainValue(blockers))
	if len(blockers) > 0 {
		f.Next = query.Suggestion("the blocker: look at what it is doing first (pg_stat_activity)", query.NextTerminateBackend(blockers[0]))
	}
	return f, nil
}

func (env *Env) targetByName(name string) query.Target {
	for _, t := range env.Targets {
		if t.TableName() == name {
			return t
		}
	}
	return query.Target{Silo: query.SiloCell}
}
