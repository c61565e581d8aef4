package cmd

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/exporter"
)

// metricsOptions are outboxctl metrics' flags.
type metricsOptions struct {
	// Textfile is where to write the families for node_exporter's textfile collector
	// instead of stdout.
	Textfile string
	tierFlags
}

// Validate checks the timeouts and that a textfile is named as node_exporter reads it.
func (o metricsOptions) Validate() error {
	if err := o.validate("outboxctl metrics"); err != nil {
		return err
	}
	if o.Textfile != "" && filepath.Ext(o.Textfile) != ".prom" {
		return usageErrorf("outboxctl metrics --textfile /var/lib/node_exporter/textfile/outboxctl.prom",
			"--textfile %q: node_exporter's textfile collector reads only files ending in .prom", o.Textfile)
	}
	return nil
}

func newMetricsCmd(a *app) *cobra.Command {
	o := metricsOptions{}
	c := &cobra.Command{
		Use:   "metrics",
		Short: "Collect the exporter's metrics once and print them (or write a node_exporter textfile)",
		Long: strings.TrimSpace(`
Runs both tiers of outboxctl exporter once, for one context, several or --all-contexts, and
prints the same families in Prometheus' text format; --textfile PATH writes them for
node_exporter's textfile collector instead, atomically (a temporary file beside PATH, then a
rename), for a cron job. A context that failed still gets its outboxctl_up 0 and error
counts; the exit is then 1 (one context, or all) or 6 (some). See docs/exporter.md.`),
		Example: examples(`
  # Every context, to stdout
  outboxctl metrics --all-contexts

  # From cron, every minute, for node_exporter --collector.textfile.directory
  outboxctl metrics --textfile /var/lib/node_exporter/textfile/outboxctl.prom`),
		Args: exactArgs(0, "(none)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			sources, err := a.exporterSources("outboxctl metrics")
			if err != nil {
				return err
			}
			return runMetrics(c.Context(), a.factory(), o, sources)
		},
	}
	c.Flags().StringVar(&o.Textfile, "textfile", "", "write to this file (ending in .prom) atomically instead of stdout")
	addTierFlags(c, &o.tierFlags)
	return c
}

// runMetrics collects once and prints or writes the families (exporter.Once); the verdict
// follows what failed.
func runMetrics(ctx context.Context, d factory, o metricsOptions, sources []exporter.Source) error {
	return exporter.Once(ctx, sources, exporter.Options{
		CheapTimeout: o.CheapTimeout, ExpensiveTimeout: o.ExpensiveTimeout, Version: versionString(),
	}, o.Textfile, d.printer.Exposition)
}
