package exporter

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Options are the tiers' schedules and bounds. Zero values take the defaults.
type Options struct {
	// CheapInterval and ExpensiveInterval are how often each tier collects (defaults near
	// Sentry's: 15 s and 5 min); CheapTimeout and ExpensiveTimeout each tier's statement
	// timeout (5 s and 30 s, as Sentry's backlog metrics).
	CheapInterval, ExpensiveInterval time.Duration
	CheapTimeout, ExpensiveTimeout   time.Duration
	// Backoff is the first wait before a failed tier tries again (doubling up to the
	// tier's interval): a lost connection is re-established soon, a dead server is not
	// hammered.
	Backoff time.Duration
	// MaxConnections caps the HTTP connections open at once (default 64), MaxScrapes the
	// /metrics requests served at once (default 4; the others get 503).
	MaxConnections, MaxScrapes int
	// ReadTimeout, WriteTimeout and IdleTimeout bound a client: reading its request
	// (10 s), writing an answer (10 s; Prometheus's scrape timeout is 10 s at most by
	// default), an idle keep-alive connection (30 s, twice the default scrape interval).
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Version is outboxctl's version for build_info.
	Version string
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Defaults.
const (
	DefaultCheapInterval     = 15 * time.Second
	DefaultExpensiveInterval = 5 * time.Minute
	DefaultCheapTimeout      = 5 * time.Second
	DefaultExpensiveTimeout  = 30 * time.Second
	DefaultBackoff           = time.Second
	DefaultMaxConnections    = 64
	DefaultMaxScrapes        = 4
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
)

func (o Options) withDefaults() Options {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&o.CheapInterval, DefaultCheapInterval}, {&o.ExpensiveInterval, DefaultExpensiveInterval},
		{&o.CheapTimeout, DefaultCheapTimeout}, {&o.ExpensiveTimeout, DefaultExpensiveTimeout},
		{&o.Backoff, DefaultBackoff},
		{&o.ReadTimeout, DefaultReadTimeout}, {&o.WriteTimeout, DefaultWriteTimeout}, {&o.IdleTimeout, DefaultIdleTimeout},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxScrapes <= 0 {
		o.MaxScrapes = DefaultMaxScrapes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// tier is one tier of one context: its kept-open connection and its cache of last values.
type tier struct {
	name     Tier
	src      *Source
	cfg      db.Config
	interval time.Duration
	collect  func(ctx context.Context, conn *db.Conn) ([]sample, error)

	conn *db.Conn // used by the tier's own loop only

	mu       sync.Mutex
	samples  []sample
	duration float64
	errors   float64
	last     time.Time // the last success
	ok       bool      // the last attempt succeeded
	done     bool      // attempted at least once
	lastErr  error
}

// Exporter collects every context's tiers and serves their last values.
type Exporter struct {
	opts  Options
	tiers []*tier
	// readyOnce closes ready when every tier has been attempted once.
	ready chan struct{}
	wg    sync.WaitGroup
	left  int
	mu    sync.Mutex
	// connects and cycles count the connections made and the collections run (the tests'
	// proof that connections are kept open and that a soak ran its cycles).
	connects, cycles atomic.Int64
	// listener is Serve's (the tests count its connections).
	listener atomic.Pointer[limitListener]
}

// New prepares the tiers of every source; nothing connects until Run or CollectOnce.
func New(sources []Source, o Options) *Exporter {
	o = o.withDefaults()
	e := &Exporter{opts: o, ready: make(chan struct{})}
	for i := range sources {
		src := &sources[i]
		cheap := src.Config
		cheap.StatementTimeout, cheap.Command = o.CheapTimeout, "exporter-cheap"
		exp := src.Config
		exp.StatementTimeout, exp.Command = o.ExpensiveTimeout, "exporter-expensive"
		e.tiers = append(e.tiers,
			&tier{name: Cheap, src: src, cfg: cheap, interval: o.CheapInterval, collect: src.cheap},
			&tier{name: Expensive, src: src, cfg: exp, interval: o.ExpensiveInterval, collect: src.expensive})
	}
	e.left = len(e.tiers)
	if e.left == 0 {
		close(e.ready)
	}
	return e
}

func (src *Source) cheap(ctx context.Context, conn *db.Conn) ([]sample, error) {
	var out []sample
	err := src.inSnapshot(ctx, conn, func(s *snapshot) (err error) {
		out, err = collectCheap(s)
		return err
	})
	return out, err
}

func (src *Source) expensive(ctx context.Context, conn *db.Conn) ([]sample, error) {
	var out []sample
	err := src.inSnapshot(ctx, conn, func(s *snapshot) (err error) {
		out, err = collectExpensive(s)
		return err
	})
	if err != nil {
		return nil, err
	}
	more, err := src.collectBackfill(ctx, conn)
	out = append(out, more...)
	if err != nil {
		return out, err
	}
	mailboxes, err := src.collectMailboxes(ctx, conn)
	return append(out, mailboxes...), err
}

// once runs one collection of t: it connects when it holds no connection, and drops the
// connection after a failure (the next attempt makes a new one). A failure keeps the last
// values and counts the error.
func (e *Exporter) once(ctx context.Context, t *tier) error {
	start := e.opts.Now()
	var samples []sample
	err := func() error {
		if t.conn == nil {
			e.connects.Add(1)
			conn, err := db.Connect(ctx, t.cfg)
			if err != nil {
				return err
			}
			t.conn = conn
		}
		var err error
		samples, err = t.collect(ctx, t.conn)
		return err
	}()
	if err != nil && t.conn != nil {
		_ = t.conn.Close(context.WithoutCancel(ctx))
		t.conn = nil
	}
	end := e.opts.Now()
	t.mu.Lock()
	t.duration = end.Sub(start).Seconds()
	t.ok, t.lastErr = err == nil, err
	if err == nil {
		t.samples, t.last = samples, end
	} else {
		t.errors++
	}
	first := !t.done
	t.done = true
	t.mu.Unlock()
	e.cycles.Add(1)
	if first {
		e.attempted()
	}
	return err
}

func (e *Exporter) attempted() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.left--; e.left == 0 {
		close(e.ready)
	}
}

// CollectOnce runs every tier of every context once, concurrently, and returns the errors
// joined (each tier's values are then in the cache, or its error counted).
func (e *Exporter) CollectOnce(ctx context.Context) error {
	errs := make([]error, len(e.tiers))
	var wg sync.WaitGroup
	for i, t := range e.tiers {
		wg.Go(func() {
			if err := e.once(ctx, t); err != nil {
				errs[i] = &CollectError{Context: t.src.Name, Tier: t.name, Err: err}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// CollectError is one tier's failure.
type CollectError struct {
	Context string
	Tier    Tier
	Err     error
}

func (c *CollectError) Error() string {
	return "context " + c.Context + ", " + string(c.Tier) + " tier: " + c.Err.Error()
}

func (c *CollectError) Unwrap() error { return c.Err }

// Run collects every tier in the background, each on its own interval (after a failure,
// sooner: Backoff doubling up to the interval), until ctx ends; Wait waits for the loops.
func (e *Exporter) Run(ctx context.Context) {
	for _, t := range e.tiers {
		e.wg.Go(func() { e.loop(ctx, t) })
	}
}

func (e *Exporter) loop(ctx context.Context, t *tier) {
	defer func() {
		if t.conn != nil {
			_ = t.conn.Close(context.WithoutCancel(ctx))
			t.conn = nil
		}
	}()
	backoff := e.opts.Backoff
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		wait := t.interval
		if err := e.once(ctx, t); err != nil && ctx.Err() == nil {
			wait = min(backoff, t.interval)
			backoff = min(backoff*2, t.interval)
		} else {
			backoff = e.opts.Backoff
		}
		timer.Reset(wait)
	}
}

// Wait waits for Run's loops to end (after ctx is done); their connections are closed.
func (e *Exporter) Wait() { e.wg.Wait() }

// Ready is closed once every tier has been attempted once.
func (e *Exporter) Ready() <-chan struct{} { return e.ready }

// HasData reports whether any tier of any context has succeeded once: /metrics then
// serves values read from a database.
func (e *Exporter) HasData() bool {
	for _, t := range e.tiers {
		t.mu.Lock()
		ok := !t.last.IsZero()
		t.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// Errors are the last errors of the tiers that failed, for a log line.
func (e *Exporter) Errors() []error {
	var out []error
	for _, t := range e.tiers {
		t.mu.Lock()
		if t.done && !t.ok && t.lastErr != nil {
			out = append(out, &CollectError{Context: t.src.Name, Tier: t.name, Err: t.lastErr})
		}
		t.mu.Unlock()
	}
	return out
}

// Describe sends every family.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the cached values: a scrape never runs a query.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	ch <- constMetric(descBuild, prometheus.GaugeValue, 1, e.opts.Version, runtime.Version())
	up := map[string]float64{}
	var order []string
	for _, t := range e.tiers {
		t.mu.Lock()
		for _, s := range t.samples {
			ch <- constMetric(s.desc, prometheus.GaugeValue, s.value, s.labels...)
		}
		labels := []string{t.src.Name, string(t.name)}
		ch <- constMetric(descDuration, prometheus.GaugeValue, t.duration, labels...)
		ch <- constMetric(descErrors, prometheus.CounterValue, t.errors, labels...)
		last := 0.0
		if !t.last.IsZero() {
			last = float64(t.last.UnixMilli()) / 1000
		}
		ch <- constMetric(descLast, prometheus.GaugeValue, last, labels...)
		if t.name == Cheap {
			if _, seen := up[t.src.Name]; !seen {
				order = append(order, t.src.Name)
			}
			up[t.src.Name] = boolValue(t.ok)
		}
		t.mu.Unlock()
	}
	for _, name := range order {
		ch <- constMetric(descUp, prometheus.GaugeValue, up[name], name)
	}
}

// constMetric is one value with its labels cleaned: a cell name or an --enums name is
// untrusted text, so a control character becomes "?" (textsafe.Clean) and invalid UTF-8
// (which the exposition format refuses) U+FFFD.
func constMetric(d *prometheus.Desc, vt prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	clean := make([]string, len(labels))
	for i, l := range labels {
		clean[i] = textsafe.Clean(strings.ToValidUTF8(l, "\uFFFD"))
	}
	m, err := prometheus.NewConstMetric(d, vt, v, clean...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// Registry is a registry holding the exporter; withRuntime adds the Go and process
// collectors (the long-running exporter's own health; not in a textfile, where
// node_exporter has its own).
func (e *Exporter) Registry(withRuntime bool) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	if withRuntime {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return reg
}
