package cmd

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/bytesize"
	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/contract"
	"github.com/outboxctl/outboxctl/internal/jqrun"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/textsafe"
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
// output they imply.
func (a *app) validateSelection(c *cobra.Command) error {
	fields, jq := c.Flags().Changed("json"), c.Flags().Changed("jq")
	if !fields && !jq {
		return nil
	}
	path := c.CommandPath()
	flag, again := "--json", path+" --json "+textsafe.ShellQuote(a.g.JSONFields)
	if !fields {
		flag, again = "--jq", path+" --jq "+textsafe.ShellQuote(a.g.JQ)
	}
	switch f, _ := render.ParseFormat(a.g.Output); f {
	case render.FormatAuto:
		a.g.Output = string(render.FormatJSON)
	case render.FormatJSON, render.FormatJSONL:
	case render.FormatTable, render.FormatWide, render.FormatCSV, render.FormatMarkdown:
		return usageErrorf(again, "`%s` prints JSON, and -o %s asks for another format: drop one of them", flag, a.g.Output)
	}
	if a.g.PrintSQL {
		return usageErrorf(path+" --print-sql", "`%s` selects from the JSON output, and --print-sql prints SQL instead: drop one of them", flag)
	}
	if fields && a.g.JSONFields == cmdline.ListFields {
		a.sel.List = true
		// A read lists its document's fields by running; a mutation (every one asks for
		// --yes) would change the database, and its dry run prints no document: its fields
		// come from its declared documents (internal/contract), and nothing runs.
		if c.Flags().Lookup("yes") != nil {
			return a.listDeclaredFields(path)
		}
	} else if fields {
		if a.sel.Fields = render.ParseFields(a.g.JSONFields); len(a.sel.Fields) == 0 {
			return usageErrorf(path+" --json", "`--json` needs comma-separated field names, got %q: `--json` alone lists them", a.g.JSONFields)
		}
		// A mutation's fields are checked before it runs: found unknown only once the
		// document is printed, the change would already be made.
		if c.Flags().Lookup("yes") != nil {
			if err := a.knownFields(path, a.sel.Fields); err != nil {
				return err
			}
		}
	}
	if jq {
		if a.sel.JQLimits.Timeout <= 0 || a.sel.JQLimits.MaxBytes <= 0 {
			return usageErrorf(again, "`--jq-timeout` and `--max-jq-bytes` must be more than 0 (defaults %s and %s)", jqrun.DefaultTimeout, bytesize.Format(jqrun.DefaultMaxBytes))
		}
		q, err := render.ParseJQ(a.g.JQ)
		if err != nil {
			return usageErrorf(path+" --jq '.'", "%v", err)
		}
		a.sel.JQ = q
	}
	return nil
}

// listDeclaredFields is --json alone on a mutation: the fields its documents declare
// (internal/contract), said as a read's listing says them, before anything runs.
func (a *app) listDeclaredFields(path string) error {
	doc, ok := contract.Lookup(strings.TrimPrefix(path, "outboxctl "))
	if !ok {
		return usageErrorf(path+" --help", "`--json` without fields lists a document's fields, and %s declares no JSON document", path)
	}
	return a.selectionError(path, &render.FieldsError{Available: doc.Fields()})
}

// knownFields refuses a --json field that the command's document (internal/contract) does not
// have, naming the ones it has.
func (a *app) knownFields(path string, fields []string) error {
	doc, ok := contract.Lookup(strings.TrimPrefix(path, "outboxctl "))
	if !ok {
		return nil
	}
	known := doc.Fields()
	for _, f := range fields {
		if !slices.Contains(known, f) {
			return a.selectionError(path, &render.FieldsError{Unknown: []string{f}, Available: known})
		}
	}
	return nil
}

// selectionError turns a render.FieldsError (an unknown --json field, or --json alone) into
// a usage error whose hint is this invocation (its arguments, flags and target kept) with
// the first fields the document has.
func (a *app) selectionError(path string, err error) error {
	var fe *render.FieldsError
	if !errors.As(err, &fe) {
		return err
	}
	pick := fe.Available[:min(3, len(fe.Available))]
	add := []string{"--json", strings.Join(pick, ",")}
	if len(pick) == 0 {
		add = []string{"-o", "json"}
	}
	hint := strings.Join(append([]string{path}, add...), " ")
	if len(a.args) > 0 {
		hint = textsafe.Command(append(a.argsWithout(map[string]bool{"dsn": true, "json": true}), add...)...)
	}
	return usageErrorf(hint, "%s", fe.Error())
}
