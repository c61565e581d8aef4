package cmd

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/jqrun"
	"github.com/outboxctl/outboxctl/internal/selection"
)

// noRewrittenValue refuses a flag that took, as its value, the word that stood for a bare
// --json or --watch after it (`skip 1 --reason --json` gave --reason "--json" as a reason,
// a sentinel that then reached the SQL comment, the audit line and the archive): the flag
// was given no value.
func (a *app) noRewrittenValue(c *cobra.Command) error {
	var err error
	c.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || f.Name == "json" || f.Name == "watch" || !a.rewritten[f.Value.String()] {
			return
		}
		next := strings.SplitN(f.Value.String(), "=", 2)[0]
		err = usageErrorf("", "`--%s` needs a value: it was given none before %s (give it one: --%s=VALUE)", f.Name, next, f.Name)
	})
	return err
}

// addSelectionFlags registers --json and --jq, which every command printing a JSON
// document takes (render.Selection does the work, in the encoders).
func addSelectionFlags(a *app, root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.g.JSONFields, "json", "", "print JSON with only these comma-separated fields of each row or card (implies -o json; -o jsonl keeps one object a line); --json alone lists the fields")
	f.StringVar(&a.g.JQ, "jq", "", "filter the JSON output with a jq expression (implies -o json): a string result prints raw, anything else as compact JSON, one a line")
	// gojq has no bound of its own: the evaluation runs in a process of its own under these
	// (internal/jqrun), far above what an expression over outboxctl's output needs.
	addDurationFlag(f, &a.sel.JQLimits.Timeout, "jq-timeout", jqrun.DefaultTimeout, "30s", "stop a --jq expression that runs longer than this (exit 1)")
	addSizeFlag(f, (*byteSize)(&a.sel.JQLimits.MaxBytes), "max-jq-bytes", jqrun.DefaultMaxBytes, "stop a --jq expression whose evaluation holds more memory than this, the output it reads included (KiB, MiB, GiB; exit 1): outboxctl's output takes a few times its size")
}

// validateSelection checks --json and --jq before the command runs and makes JSON the
// output they imply (selection.Check).
func (a *app) validateSelection(c *cobra.Command) error {
	out, err := selection.Check(selection.Flags{Path: c.CommandPath(), Args: a.args,
		Fields: c.Flags().Changed("json"), JQ: c.Flags().Changed("jq"), JSONFields: a.g.JSONFields, Expr: a.g.JQ,
		Output: a.g.Output, PrintSQL: a.g.PrintSQL, Mutation: c.Flags().Lookup("yes") != nil}, &a.sel)
	a.g.Output = out
	return err
}

// selectionError turns a render.FieldsError (an unknown --json field, or --json alone) into
// a usage error whose hint is this invocation with the first fields the document has
// (selection.Error).
func (a *app) selectionError(path string, err error) error { return selection.Error(path, a.args, err) }
