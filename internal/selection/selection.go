// Package selection checks --json and --jq before a command runs, and turns the printer's
// refusal of a field (render.FieldsError) into the usage error that says which fields the
// document has: what the flags select of the document, decided from plain values.
package selection

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/outboxctl/outboxctl/internal/bytesize"
	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/contract"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/jqrun"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Flags are --json and --jq as the command line gave them, with what they are checked
// against.
type Flags struct {
	Path       string   // the command's path: "outboxctl shards"
	Args       []string // the invocation's words (none: a run function called by a test)
	Fields, JQ bool     // --json and --jq were given
	JSONFields string   // --json's value (cmdline.ListFields: given alone)
	Expr       string   // --jq's expression
	Output     string   // -o
	PrintSQL   bool
	// Mutation says the command changes a database (it takes --yes): its fields are checked
	// before it runs.
	Mutation bool
}

// Check checks --json and --jq and fills sel (its JQLimits already the flags'): the output
// they imply (JSON when -o is not given) is returned.
func Check(f Flags, sel *render.Selection) (string, error) {
	if !f.Fields && !f.JQ {
		return f.Output, nil
	}
	flag, again := "--json", f.Path+" --json "+textsafe.ShellQuote(f.JSONFields)
	if !f.Fields {
		flag, again = "--jq", f.Path+" --jq "+textsafe.ShellQuote(f.Expr)
	}
	output := f.Output
	switch format, _ := render.ParseFormat(f.Output); format {
	case render.FormatAuto:
		output = string(render.FormatJSON)
	case render.FormatJSON, render.FormatJSONL:
	case render.FormatTable, render.FormatWide, render.FormatCSV, render.FormatMarkdown:
		return output, usagef(again, "`%s` prints JSON, and -o %s asks for another format: drop one of them", flag, f.Output)
	}
	if f.PrintSQL {
		return output, usagef(f.Path+" --print-sql", "`%s` selects from the JSON output, and --print-sql prints SQL instead: drop one of them", flag)
	}
	if f.Fields && f.JSONFields == cmdline.ListFields {
		sel.List = true
		// A read lists its document's fields by running; a mutation (every one asks for
		// --yes) would change the database, and its dry run prints no document: its fields
		// come from its declared documents (internal/contract), and nothing runs.
		if f.Mutation {
			return output, listDeclared(f)
		}
	} else if f.Fields {
		if sel.Fields = render.ParseFields(f.JSONFields); len(sel.Fields) == 0 {
			return output, usagef(f.Path+" --json", "`--json` needs comma-separated field names, got %q: `--json` alone lists them", f.JSONFields)
		}
		// A mutation's fields are checked before it runs: found unknown only once the
		// document is printed, the change would already be made.
		if f.Mutation {
			if err := known(f, sel.Fields); err != nil {
				return output, err
			}
		}
	}
	if f.JQ {
		if sel.JQLimits.Timeout <= 0 || sel.JQLimits.MaxBytes <= 0 {
			return output, usagef(again, "`--jq-timeout` and `--max-jq-bytes` must be more than 0 (defaults %s and %s)", jqrun.DefaultTimeout, bytesize.Format(jqrun.DefaultMaxBytes))
		}
		q, err := render.ParseJQ(f.Expr)
		if err != nil {
			return output, usagef(f.Path+" --jq '.'", "%v", err)
		}
		sel.JQ = q
	}
	return output, nil
}

// listDeclared is --json alone on a mutation: the fields its documents declare
// (internal/contract), said as a read's listing says them, before anything runs.
func listDeclared(f Flags) error {
	doc, ok := contract.Lookup(strings.TrimPrefix(f.Path, "outboxctl "))
	if !ok {
		return usagef(f.Path+" --help", "`--json` without fields lists a document's fields, and %s declares no JSON document", f.Path)
	}
	return Error(f.Path, f.Args, &render.FieldsError{Available: doc.Fields()})
}

// known refuses a --json field that the command's document (internal/contract) does not
// have, naming the ones it has.
func known(f Flags, fields []string) error {
	doc, ok := contract.Lookup(strings.TrimPrefix(f.Path, "outboxctl "))
	if !ok {
		return nil
	}
	known := doc.Fields()
	for _, field := range fields {
		if !slices.Contains(known, field) {
			return Error(f.Path, f.Args, &render.FieldsError{Unknown: []string{field}, Available: known})
		}
	}
	return nil
}

// Error turns a render.FieldsError (an unknown --json field, or --json alone) into a usage
// error whose hint is the invocation args of the command at path (its arguments, flags and
// target kept) with the first fields the document has; any other error is returned as it is.
func Error(path string, args []string, err error) error {
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
	if len(args) > 0 {
		hint = textsafe.Command(append(cmdline.Without(args, map[string]bool{"dsn": true, "json": true}), add...)...)
	}
	return usagef(hint, "%s", fe.Error())
}

// usagef is the operator's input, not a failure, with the command line to try.
func usagef(try, format string, args ...any) error {
	return &exitcode.Outcome{Means: exitcode.Usage, Msg: fmt.Sprintf(format, args...), Try: try}
}
