package doctor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Every statement's rows are read into its row type by column name (query.Rows): a NULL
// where the type has no pointer, a missing column or a value of another type is an error,
// never a silent zero. Where a column may be NULL the finding says what NULL means.

// readRows runs st in the snapshot and reads its rows into T by column name.
func readRows[T any](ctx context.Context, env *Env, st query.Statement) ([]T, error) {
	res, err := env.run(ctx, st)
	if err != nil {
		return nil, err
	}
	return query.Rows[T](res)
}

// shardRows runs a shard listing of t and reads its rows into T by name, with each row's
// cell in the control silo (empty in the cell silo): the cell column is named as the
// table names it, so it is read apart, under the same rules.
func shardRows[T any](ctx context.Context, env *Env, t query.Target, st query.Statement) ([]T, []string, error) {
	res, err := env.run(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	return readShardRows[T](res, t)
}

func readShardRows[T any](res *query.Result, t query.Target) ([]T, []string, error) {
	rows, err := query.Rows[T](res)
	if err != nil {
		return nil, nil, err
	}
	cells := make([]string, len(rows))
	if !t.Control() {
		return rows, cells, nil
	}
	c := res.Col(t.CellColumnName())
	if c < 0 {
		return nil, nil, fmt.Errorf("%s returns no column %q", res.Statement, t.CellColumnName())
	}
	renamed := *res
	renamed.Columns = slices.Clone(res.Columns)
	renamed.Columns[c] = "cell"
	type cellRow struct {
		Cell string `db:"cell"`
	}
	cr, err := query.Rows[cellRow](&renamed)
	if err != nil {
		return nil, nil, err
	}
	for i, r := range cr {
		cells[i] = r.Cell
	}
	return rows, cells, nil
}

// run executes one statement in the snapshot.
func (env *Env) run(ctx context.Context, st query.Statement) (*query.Result, error) {
	res, err := query.Run(ctx, env.Tx, st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	return res, nil
}

// serverInfo is what DoctorServer read; several checks share it.
type serverInfo query.DoctorServerRow

func (env *Env) serverInfo(ctx context.Context) (*serverInfo, error) {
	if env.server != nil {
		return env.server, nil
	}
	rows, err := readRows[query.DoctorServerRow](ctx, env, query.DoctorServer())
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("doctor-server returned %d rows, want 1", len(rows))
	}
	s := serverInfo(rows[0])
	env.server = &s
	return env.server, nil
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

// command is an outboxctl command line on table t (its --silo control and --cell, its
// --table) after the invocation's prefix, every argument quoted (textsafe.ShellQuote).
func (env *Env) command(t query.Target, cell string, args ...string) string {
	var words []string
	if t.Control() {
		words = append(words, "--silo", "control")
		if cell != "" {
			words = append(words, "--cell", cell)
		}
	}
	if t.Table != "" {
		words = append(words, "--table", t.Table)
	}
	return env.Prefix + " " + textsafe.Command(append(words, args...)...)
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

// shardName names a shard in a summary in the one form every message uses,
// ORGANIZATION_SCOPE/42 (with its cell in the control silo: us:ORGANIZATION_SCOPE/42).
func (env *Env) shardName(t query.Target, cell string, scope, shard int64) string {
	s := fmt.Sprintf("%s/%d", env.Registry.ScopeName(int(scope)), shard)
	if t.Control() {
		s = Clean(cell) + ":" + s
	}
	return s
}

// ShellQuote quotes s for a POSIX shell when it needs it, on one line (textsafe.ShellQuote:
// a control character is spelled as an escape of a $'…' word, so the value stays exact).
func ShellQuote(s string) string { return textsafe.ShellQuote(s) }

// SQLString is s as a SQL string literal that is always one line: control characters are
// written as escapes of an E” literal, which reads the same under either
// standard_conforming_strings setting.
func SQLString(s string) string { return query.OneLineLiteral(s) }

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
