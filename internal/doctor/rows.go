package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// row reads one result row by column name.
type row struct {
	res *query.Result
	r   []any
}

func rowsOf(res *query.Result) []row {
	out := make([]row, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = row{res: res, r: r}
	}
	return out
}

func (w row) v(name string) any {
	if i := w.res.Col(name); i >= 0 {
		return w.r[i]
	}
	return nil
}

func (w row) i(name string) int64 { return query.AsInt64(w.v(name)) }

func (w row) f(name string) float64 {
	switch x := w.v(name).(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}

func (w row) s(name string) string {
	s, _ := w.v(name).(string)
	return s
}

func (w row) t(name string) time.Time {
	t, _ := w.v(name).(time.Time)
	return t
}

func (w row) b(name string) bool { return w.v(name) == true }

func (w row) null(name string) bool { return w.v(name) == nil }

// run executes one statement in the snapshot.
func (env *Env) run(ctx context.Context, st query.Statement) (*query.Result, error) {
	res, err := query.Run(ctx, env.Tx, st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	return res, nil
}

// serverInfo is what DoctorServer read; several checks share it.
type serverInfo struct {
	InRecovery      bool
	ReplayLag       *float64
	ReplayLagBytes  *int64
	Autovacuum      bool
	VacThreshold    int64
	VacScale        float64
	MaxPrepared     int64
	Role            string
	SeesAllSessions bool
	OldestXidAge    int64
}

func (env *Env) serverInfo(ctx context.Context) (*serverInfo, error) {
	if env.server != nil {
		return env.server, nil
	}
	res, err := env.run(ctx, query.DoctorServer())
	if err != nil {
		return nil, err
	}
	w := rowsOf(res)[0]
	s := &serverInfo{
		InRecovery: w.b("in_recovery"), Autovacuum: w.b("autovacuum"),
		VacThreshold: w.i("vacuum_threshold"), VacScale: w.f("vacuum_scale_factor"),
		MaxPrepared: w.i("max_prepared_transactions"), Role: w.s("role"),
		SeesAllSessions: w.b("sees_all_sessions"), OldestXidAge: w.i("oldest_running_xid_age"),
	}
	if !w.null("replay_lag_seconds") {
		lag := w.f("replay_lag_seconds")
		s.ReplayLag = &lag
	}
	if !w.null("replay_lag_bytes") {
		b := w.i("replay_lag_bytes")
		s.ReplayLagBytes = &b
	}
	env.server = s
	return s, nil
}

// scopeArg is a scope as the outboxctl command line takes it: "organization", or raw:N for
// an integer this build does not know.
func (env *Env) scopeArg(scope int64) string {
	name := env.Registry.ScopeName(int(scope))
	if strings.HasPrefix(name, "UNKNOWN(") {
		return "raw:" + strconv.FormatInt(scope, 10)
	}
	return strings.ToLower(strings.TrimSuffix(name, "_SCOPE"))
}

// shardCommand is the outboxctl command that inspects one shard.
func (env *Env) shardCommand(t query.Target, cell string, scope, shard int64) string {
	cmd := env.Prefix
	if t.Control() {
		cmd += " --silo control"
		if cell != "" {
			cmd += " --cell " + ShellQuote(cell)
		}
	}
	if t.Table != "" {
		cmd += " --table " + ShellQuote(t.Table)
	}
	return fmt.Sprintf("%s inspect shard %s %d", cmd, env.scopeArg(scope), shard)
}

// shardName names a shard in a summary: "organization/42" (with its cell in the control silo).
func (env *Env) shardName(t query.Target, cell string, scope, shard int64) string {
	s := fmt.Sprintf("%s/%d", env.scopeArg(scope), shard)
	if t.Control() {
		s = Clean(cell) + ":" + s
	}
	return s
}

// ShellQuote quotes s for a POSIX shell when it needs it; control characters are replaced,
// so a suggested command is always one line.
func ShellQuote(s string) string {
	s = Clean(s)
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:@=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SQLString is s as a SQL string literal that is always one line: control characters are
// written as escapes of an E” literal, which reads the same under either
// standard_conforming_strings setting.
func SQLString(s string) string {
	hasCtl := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }) >= 0
	if !hasCtl {
		if lit, err := query.Literal(s); err == nil {
			return lit
		}
	}
	var b strings.Builder
	b.WriteString("E'")
	for _, r := range s {
		switch {
		case r == '\'':
			b.WriteString("''")
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}

func seconds(d time.Duration) float64 { return roundTo(d.Seconds(), 1) }

func roundTo(f float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(f*p+0.5)) / p
}

func dur(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
