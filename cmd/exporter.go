package cmd

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/exporter"
)

// multiContextCommands read every context selected (--context a,b, --all-contexts) with
// their own collectors, one set per context, instead of the fan-out's merged document;
// like the reads they go to a context's replica-dsn when it has one.
var multiContextCommands = map[string]bool{"outboxctl exporter": true, "outboxctl metrics": true} //nolint:gochecknoglobals // constant set

// tierFlags are the tiers' statement timeouts, which exporter and metrics share.
type tierFlags struct {
	CheapTimeout, ExpensiveTimeout time.Duration
}

func addTierFlags(c *cobra.Command, o *tierFlags) {
	f := c.Flags()
	addDurationFlag(f, &o.CheapTimeout, "cheap-timeout", exporter.DefaultCheapTimeout, "5s",
		"statement timeout of the cheap tier (estimates, index-aligned reads)")
	addDurationFlag(f, &o.ExpensiveTimeout, "expensive-timeout", exporter.DefaultExpensiveTimeout, "30s",
		"statement timeout of the expensive tier (exact depth, top shards)")
}

func (o tierFlags) validate(command string) error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"cheap-timeout", o.CheapTimeout}, {"expensive-timeout", o.ExpensiveTimeout}} {
		if d.v <= 0 {
			return usageErrorf(command+" --"+d.name+" 5s", "--%s must be positive, got %s", d.name, d.v)
		}
	}
	return nil
}

// exporterOptions are outboxctl exporter's flags.
type exporterOptions struct {
	Listen                           string
	CheapInterval, ExpensiveInterval time.Duration
	MaxConnections, MaxScrapes       int
	tierFlags
}

// Validate checks the address and that each tier's timeout fits in its interval.
func (o exporterOptions) Validate() error {
	const try = "outboxctl exporter --listen 127.0.0.1:9187"
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return usageErrorf(try, "--listen %q: want HOST:PORT (%v)", o.Listen, err)
	}
	if err := o.validate("outboxctl exporter"); err != nil {
		return err
	}
	if o.MaxConnections < 1 || o.MaxScrapes < 1 {
		return usageErrorf("outboxctl exporter --max-connections 64 --max-scrapes 4", "--max-connections and --max-scrapes must be at least 1, got %d and %d", o.MaxConnections, o.MaxScrapes)
	}
	for _, d := range []struct {
		name, timeoutName string
		interval, timeout time.Duration
	}{
		{"cheap-interval", "cheap-timeout", o.CheapInterval, o.CheapTimeout},
		{"expensive-interval", "expensive-timeout", o.ExpensiveInterval, o.ExpensiveTimeout},
	} {
		if d.interval < d.timeout {
			return usageErrorf("outboxctl exporter --"+d.name+" "+d.timeout.String(),
				"--%s %s is shorter than --%s %s: a collection could outlast its interval", d.name, d.interval, d.timeoutName, d.timeout)
		}
	}
	return nil
}

func newExporterCmd(a *app) *cobra.Command {
	o := exporterOptions{}
	c := &cobra.Command{
		Use:   "exporter",
		Short: "Serve the outboxes' metrics to Prometheus (/metrics), collected in the background",
		Long: strings.TrimSpace(`
A long-running Prometheus exporter for one context, several (--context a,b) or every one
(--all-contexts); without a config file, for the database the flags name (context
"default"). Reads go to a context's replica-dsn when it has one; a read-only role is enough.

Two collection tiers run in the background, each on its own interval and statement timeout,
on its own connection (two per context, kept open, re-established with backoff): the cheap
tier (--cheap-interval 15s) reads only the planner's estimate and index-aligned statements
(the oldest row, the heads of the oldest rows' shards); the expensive tier
(--expensive-interval 5m) the exact depth per cell, scope and category, the shards in
backoff and at the cap, the top shards (a rank label, never a shard id), the kill-switched
shards and the backfill cursors. A scrape never runs a query: it serves the last values. A
failed collection keeps them, counts the error and shows their age
(outboxctl_last_collect_timestamp_seconds).

/healthz answers 200 as soon as the server listens, /readyz once both tiers of every context
have run once and one of them succeeded (ready means "has data to serve"). Clients are
bounded: --max-connections open, --max-scrapes answered at once, read, write and idle
timeouts. SIGINT or SIGTERM stops it (exit 0). See docs/exporter.md.`),
		Example: examples(`
  # Every context of the config file, on the default port
  outboxctl exporter --all-contexts --listen 127.0.0.1:9187

  # One database, the expensive tier every minute
  outboxctl exporter --dsn postgres://outboxctl_ro@db:5432/sentry --expensive-interval 1m`),
		Args: exactArgs(0, "(none)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			sources, err := a.exporterSources("outboxctl exporter")
			if err != nil {
				return err
			}
			return runExporter(c.Context(), a.factory(), o, sources)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Listen, "listen", "127.0.0.1:9187", "address to serve /metrics, /healthz and /readyz on (HOST:PORT; port 0 picks one)")
	addDurationFlag(f, &o.CheapInterval, "cheap-interval", exporter.DefaultCheapInterval, "15s", "how often the cheap tier collects")
	addDurationFlag(f, &o.ExpensiveInterval, "expensive-interval", exporter.DefaultExpensiveInterval, "5m", "how often the expensive tier collects")
	f.IntVar(&o.MaxConnections, "max-connections", exporter.DefaultMaxConnections, "HTTP connections open at once; at the cap the one idle the longest is closed to let another in")
	f.IntVar(&o.MaxScrapes, "max-scrapes", exporter.DefaultMaxScrapes, "/metrics requests served at once; the others get 503")
	addTierFlags(c, &o.tierFlags)
	return c
}

// runExporter listens, then collects in the background and serves until ctx ends (a
// signal), which is a clean stop (exporter.Listen).
func runExporter(ctx context.Context, d factory, o exporterOptions, sources []exporter.Source) error {
	return exporter.Listen(ctx, o.Listen, sources, exporter.Options{
		CheapInterval: o.CheapInterval, ExpensiveInterval: o.ExpensiveInterval,
		CheapTimeout: o.CheapTimeout, ExpensiveTimeout: o.ExpensiveTimeout, Version: versionString(),
		MaxConnections: o.MaxConnections, MaxScrapes: o.MaxScrapes,
	}, exporter.Say{Notef: d.printer.Notef, Warnf: d.printer.Warnf})
}

// exporterSources is one exporter.Source per context selected (a.fan), each with its
// settings under the flags and its replica-dsn when it has one, or the flags' own database
// as the context "default" when no context is selected.
func (a *app) exporterSources(command string) ([]exporter.Source, error) {
	reg, err := a.registry()
	if err != nil {
		return nil, err
	}
	apps, names := []*app{a}, []string{"default"}
	if len(a.fan) > 0 {
		apps, names = nil, nil
		for _, one := range a.fan {
			sub, err := a.on(one, a.io)
			if err != nil {
				return nil, err
			}
			apps, names = append(apps, sub), append(names, one.Name)
		}
	}
	sources := make([]exporter.Source, 0, len(apps))
	for i, on := range apps {
		t, err := on.target()
		if err != nil {
			return nil, err
		}
		if _, given := db.Resolve(on.g.DSN, on.getenv); !given {
			return nil, usageErrorf(command+" --dsn postgres://USER@HOST:5432/DB",
				"%s needs a database: context %s names none (set dsn, dsn-env or service in the context, or pass --dsn)", strings.TrimPrefix(command, "outboxctl "), names[i])
		}
		sources = append(sources, exporter.Source{Name: names[i], Config: on.dbConfig(command), Target: t, Deployment: on.deployment(), Registry: reg})
	}
	return sources, nil
}
