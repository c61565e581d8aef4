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
	sessions, err := env.run(ctx, query.DoctorXminSessions(env.Config.Limit))
	if err != nil {
		return nil, err
	}
	for _, w := range rowsOf(sessions) {
		if f, ok := env.sessionFinding(srv, w); ok {
			out = append(out, f)
		}
	}
	prepared, err := env.run(ctx, query.DoctorPreparedXacts(env.Config.Limit))
	if err != nil {
		return nil, err
	}
	for _, w := range rowsOf(prepared) {
		if f, ok := env.preparedFinding(w); ok {
			out = append(out, f)
		}
	}
	slots, err := env.run(ctx, query.DoctorReplicationSlots())
	if err != nil {
		return nil, err
	}
	for _, w := range rowsOf(slots) {
		if f, ok := env.slotFinding(w); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = append(out, env.horizonOK(srv, len(sessions.Rows), len(prepared.Rows), len(slots.Rows)))
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

func (env *Env) sessionFinding(srv *serverInfo, w row) (Finding, bool) {
	xids := w.i("xmin_age_xids")
	var age *time.Duration
	if !w.null("xact_age_seconds") {
		d := time.Duration(w.f("xact_age_seconds") * float64(time.Second))
		age = &d
	}
	sev := env.Config.grade(age, xids)
	if sev == OK {
		return Finding{}, false
	}
	pid := w.i("pid")
	state := w.s("state")
	who := fmt.Sprintf("pid %d (application %s, user %s)", pid, ShellQuote(w.s("application_name")), ShellQuote(w.s("usename")))
	var what string
	switch {
	case w.null("state"):
		what = fmt.Sprintf("holds the xmin horizon %d xids back; %s", xids, hiddenNote(srv.Role))
	case strings.HasPrefix(state, "idle in transaction"):
		what = fmt.Sprintf("is %s: its transaction has been open %s and holds the xmin horizon %d xids back", state, dur(age.Seconds()), xids)
	default:
		what = fmt.Sprintf("(%s) has had its transaction open %s, holding the xmin horizon %d xids back", state, dur(age.Seconds()), xids)
	}
	ev := Evidence{{"pid", pid}, {"application_name", Clean(w.s("application_name"))}, {"usename", Clean(w.s("usename"))},
		{"state", w.v("state")}, {"backend_type", w.v("backend_type")}, {"backend_xid", w.v("backend_xid")}, {"backend_xmin", w.v("backend_xmin")},
		{"xmin_age_xids", xids}, {"xact_age_seconds", nil}, {"query", w.v("query")}}
	if age != nil {
		ev[8].Value = seconds(*age)
	}
	if q, ok := w.v("query").(string); ok {
		ev[9].Value = Clean(truncate(q, 120))
	}
	return Finding{Check: CheckXmin, Severity: sev, Summary: who + " " + what, Evidence: ev,
		Next: fmt.Sprintf("SELECT pg_terminate_backend(%d);  -- rolls its transaction back: ask its owner first", pid)}, true
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func (env *Env) preparedFinding(w row) (Finding, bool) {
	age := time.Duration(w.f("age_seconds") * float64(time.Second))
	xids := w.i("xmin_age_xids")
	sev := env.Config.grade(&age, xids)
	if sev == OK {
		return Finding{}, false
	}
	gid := w.s("gid")
	return Finding{Check: CheckXmin, Severity: sev,
		Summary: fmt.Sprintf("prepared transaction %s (owner %s, database %s) was prepared %s ago and holds the xmin horizon %d xids back, and its locks, until it is committed or rolled back",
			SQLString(gid), ShellQuote(w.s("owner")), ShellQuote(w.s("database")), dur(age.Seconds()), xids),
		Evidence: Evidence{{"gid", Clean(gid)}, {"owner", Clean(w.s("owner"))}, {"database", Clean(w.s("database"))},
			{"xid", w.v("xid")}, {"xmin_age_xids", xids}, {"prepared", w.t("prepared")}, {"age_seconds", seconds(age)}},
		Next: fmt.Sprintf("ROLLBACK PREPARED %s;  -- in database %s, once its transaction manager has given up on it", SQLString(gid), ShellQuote(w.s("database"))),
	}, true
}

func (env *Env) slotFinding(w row) (Finding, bool) {
	xids := max(w.i("xmin_age_xids"), w.i("catalog_xmin_age_xids"))
	sev := env.Config.grade(nil, xids)
	active := w.b("active")
	var why []string
	if !w.null("xmin") || !w.null("catalog_xmin") {
		why = append(why, fmt.Sprintf("holds the xmin horizon %d xids back (xmin %v, catalog_xmin %v)", xids, orNone(w.v("xmin")), orNone(w.v("catalog_xmin"))))
	} else {
		why = append(why, "holds no xmin")
	}
	if !active && !w.null("restart_lsn") {
		sev = max(sev, Warn)
		why = append(why, fmt.Sprintf("is inactive and keeps %d MiB of WAL from %s", w.i("retained_wal_bytes")>>20, w.s("restart_lsn")))
	}
	if sev == OK {
		return Finding{}, false
	}
	name := w.s("slot_name")
	return Finding{Check: CheckXmin, Severity: sev,
		Summary: fmt.Sprintf("replication slot %s (%s, %s) %s", SQLString(name), w.s("slot_type"), map[bool]string{true: "active", false: "inactive"}[active], strings.Join(why, "; ")),
		Evidence: Evidence{{"slot_name", Clean(name)}, {"slot_type", w.v("slot_type")}, {"active", active}, {"xmin", w.v("xmin")},
			{"catalog_xmin", w.v("catalog_xmin")}, {"xmin_age_xids", xids}, {"restart_lsn", w.v("restart_lsn")},
			{"retained_wal_bytes", w.v("retained_wal_bytes")}},
		Next: fmt.Sprintf("SELECT pg_drop_replication_slot(%s);  -- only if no standby or consumer will use it again", SQLString(name)),
	}, true
}

func orNone(v any) any {
	if v == nil {
		return "none"
	}
	return v
}

// checkLocks: sessions waiting on locks of the outbox tables, who blocks them, and the shard
// when the lock is on a row. pg_blocking_pids runs once per waiter, under a short timeout.
func checkLocks(ctx context.Context, env *Env) ([]Finding, error) {
	if _, err := env.run(ctx, query.DoctorLockTimeout(env.Config.LockTimeout)); err != nil {
		return nil, err
	}
	res, err := env.run(ctx, query.DoctorLockWaits(env.Targets))
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, w := range rowsOf(res) {
		out = append(out, env.lockFinding(w))
	}
	if len(out) == 0 {
		out = append(out, Finding{Check: CheckLocks, Severity: OK,
			Summary:  "no session waits on a lock of " + strings.Join(tableNames(env.Targets), " or "),
			Evidence: Evidence{{"waiting_sessions", 0}}})
	}
	return out, nil
}

func (env *Env) lockFinding(w row) Finding {
	pid := w.i("pid")
	var blockers []int64
	if bs, ok := w.v("blocked_by").([]any); ok {
		for _, b := range bs {
			blockers = append(blockers, query.AsInt64(b))
		}
	}
	f := Finding{Check: CheckLocks, Severity: Warn, Evidence: Evidence{
		{"pid", pid}, {"application_name", Clean(w.s("application_name"))}, {"table", w.s("table_name")},
		{"locktype", w.v("locktype")}, {"mode", w.v("mode")}, {"blocked_by", blockers}, {"waiting_seconds", nil},
	}}
	if !w.null("waiting_seconds") {
		f.Evidence[6].Value = roundTo(w.f("waiting_seconds"), 1)
		if time.Duration(w.f("waiting_seconds")*float64(time.Second)) >= LockCritWait {
			f.Severity = Crit
		}
	}
	on := fmt.Sprintf("a %s lock on %s", w.s("mode"), w.s("table_name"))
	if !w.null("row_id") {
		t := env.targetByName(w.s("table_name"))
		cell := w.s("cell")
		on = fmt.Sprintf("the row lock of row %d, shard %s of %s", w.i("row_id"), env.shardName(t, cell, w.i("shard_scope"), w.i("shard_identifier")), w.s("table_name"))
		f.Evidence = append(f.Evidence, KV{"shard_scope", w.i("shard_scope")}, KV{"shard_identifier", w.i("shard_identifier")}, KV{"row_id", w.i("row_id")})
		if t.Control() {
			f.Evidence = append(f.Evidence, KV{"cell", Clean(cell)})
		}
	}
	f.Summary = fmt.Sprintf("pid %d waits for %s, held by pid(s) %s", pid, on, plainValue(blockers))
	if len(blockers) > 0 {
		f.Next = fmt.Sprintf("SELECT pg_terminate_backend(%d);  -- the blocker: look at what it is doing first (pg_stat_activity)", blockers[0])
	}
	return f
}

func (env *Env) targetByName(name string) query.Target {
	for _, t := range env.Targets {
		if t.TableName() == name {
			return t
		}
	}
	return query.Target{Silo: query.SiloCell}
}
