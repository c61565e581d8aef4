package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// StallMargin is how long past the statement timeout outboxctl waits for the server's
// answer to a statement before it gives up on its own: the server enforces
// statement_timeout, but a server (or a proxy, a PgBouncer, a NAT) that stops answering
// after the startup never reports it, and the command would wait forever.
const StallMargin = 3 * time.Second

// Keepalive probes of every TCP connection: an idle connection whose peer vanished (a
// crashed host, a dropped NAT entry) is found dead after about Idle + Count×Interval (25 s)
// instead of Linux's default of 15 s + 9×15 s.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 5 * time.Second, Count: 3} //nolint:gochecknoglobals // constant settings

// errNoAnswer is the cause of a statement deadline: what tells it from the caller's own
// cancellation (Ctrl-C) or deadline (a fan-out's).
var errNoAnswer = errors.New("db: no answer within the statement deadline")

// watchdog gives every statement of one connection a client-side deadline, as a pgx tracer:
// pgx hands the context a tracer returns to the whole call (for Query, up to the rows'
// Close), so every statement, BEGIN, COMMIT, ROLLBACK, batch and Prepare is covered, the
// ones pgx sends itself included. The deadline covers one statement from its send to its
// last row, as the server's statement_timeout does (the server counts the time it waits for
// a slow reader too), so it ends a stream only when the server would have ended it, plus
// the margin. Between statements (a drain's handler at work) nothing is armed.
type watchdog struct {
	limit   time.Duration // 0: the statement timeout is disabled, no deadline
	timeout time.Duration // the statement timeout, for the message

	mu      sync.Mutex
	stalled error // set when a statement got no answer in time: the connection is closed

	// sent counts the statements sent (a batch's each): what top's footer says the
	// poller costs.
	sent atomic.Int64
}

type cancelKey struct{}

func (w *watchdog) start(ctx context.Context) context.Context {
	if w.limit <= 0 {
		return ctx
	}
	ctx, cancel := context.WithTimeoutCause(ctx, w.limit, errNoAnswer)
	return context.WithValue(ctx, cancelKey{}, cancel)
}

// end records a stall (the error came after the deadline fired) and releases the deadline.
func (w *watchdog) end(ctx context.Context, err error) {
	cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc)
	if !ok {
		return
	}
	w.note(ctx, err)
	cancel()
}

func (w *watchdog) note(ctx context.Context, err error) {
	if err == nil || !errors.Is(context.Cause(ctx), errNoAnswer) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled == nil {
		w.stalled = &Error{Kind: KindTimeout, Err: err,
			Msg: fmt.Sprintf("no answer from PostgreSQL within %s (the statement timeout, %s, plus %s): the server, or a proxy or the network before it, stopped answering",
				w.limit, w.timeout, StallMargin),
			Hint: "check the server and what is between (PgBouncer, a proxy, the network); raise --statement-timeout if the statement is only slow"}
	}
}

// explain turns any error after a stall into the stall: pgx closes a connection whose
// statement it abandoned, and the next statement's "conn closed" would hide why.
func (w *watchdog) explain(err error) error {
	if err == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled != nil {
		return w.stalled
	}
	return err
}

func (w *watchdog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	w.sent.Add(1)
	return w.start(ctx)
}

func (w *watchdog) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	w.end(ctx, d.Err)
}

func (w *watchdog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return w.start(ctx)
}

// TraceBatchQuery notes a stall as soon as one of the batch's statements sees it, before
// the batch is closed.
func (w *watchdog) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	w.sent.Add(1)
	w.note(ctx, d.Err)
}

func (w *watchdog) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchEndData) {
	w.end(ctx, d.Err)
}

func (w *watchdog) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return w.start(ctx)
}

func (w *watchdog) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareEndData) {
	w.end(ctx, d.Err)
}

func (w *watchdog) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	return w.start(ctx)
}

func (w *watchdog) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromEndData) {
	w.end(ctx, d.Err)
}

// newWatchdog derives the deadline from the statement_timeout the transactions set (value,
// a PostgreSQL setting: the flag's milliseconds, or a DSN's own "5s", "1min"); a DSN that
// disables it ("0") disables the deadline too: the operator asked for no limit.
func newWatchdog(value string, fallback time.Duration) *watchdog {
	st, ok := parseSetting(value)
	if !ok {
		st = fallback
	}
	w := &watchdog{timeout: st}
	if st > 0 {
		w.limit = st + StallMargin
	}
	return w
}

// parseSetting reads a PostgreSQL time setting: a number of milliseconds, or a number
// followed by one of the server's units.
func parseSetting(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := v, "ms"
	if i >= 0 {
		num, unit = v[:i], strings.TrimSpace(v[i:])
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	per := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
		"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[unit]
	if per == 0 {
		return 0, false
	}
	return time.Duration(n * float64(per)), true
}
