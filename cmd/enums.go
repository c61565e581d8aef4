package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

func newEnumsCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "enums",
		Short: "List, resolve and lint outbox categories and scopes",
		Long: strings.TrimSpace(`
Work with Sentry's OutboxCategory and OutboxScope integers. The built-in registry mirrors
Sentry's category.py (categories 0–48, scopes 0–12); --enums PATH loads another checkout's.`),
		Args: exactArgs(0, "(a subcommand: list, resolve or lint)"),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newEnumsListCmd(a), newEnumsResolveCmd(a), newEnumsLintCmd(a))
	return c
}

// enumsListOptions are enums list's arguments: categories, scopes or nothing (both).
type enumsListOptions struct {
	Args []string
}

// Validate checks the arguments before the registry is loaded.
func (o enumsListOptions) Validate() error {
	if len(o.Args) > 1 || (len(o.Args) == 1 && o.Args[0] != "categories" && o.Args[0] != "scopes") {
		return usageErrorf("outboxctl enums list scopes", "enums list takes categories, scopes or nothing; got %q", strings.Join(o.Args, " "))
	}
	return nil
}

// which is the one list asked for, or "" for both.
func (o enumsListOptions) which() string {
	if len(o.Args) == 1 {
		return o.Args[0]
	}
	return ""
}

func newEnumsListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list [categories|scopes]",
		Short: "List every category and scope with its integer",
		Example: examples(`
  outboxctl enums list
  outboxctl enums list scopes -o json
  outboxctl enums list categories --enums ~/sentry/src/sentry/hybridcloud/outbox/category.py`),
		ValidArgs: []string{"categories", "scopes"},
		// Validated as cobra validates arguments (before the global flags), so a bad
		// argument is reported first, as it always was.
		Args: func(_ *cobra.Command, args []string) error { return enumsListOptions{Args: args}.Validate() },
		RunE: func(_ *cobra.Command, args []string) error {
			return runEnumsList(a.factory(), enumsListOptions{Args: args}) // Args validated them
		},
	}
}

// runEnumsList prints the categories, the scopes or both. o must have passed Validate.
func runEnumsList(d factory, o enumsListOptions) error {
	reg, err := d.registry()
	if err != nil {
		return err
	}
	which := o.which()
	var doc render.Doc
	if which != "scopes" {
		doc = append(doc, report.Categories(reg))
	}
	if which != "categories" {
		doc = append(doc, report.Scopes(reg))
	}
	d.printer.MaxCell = 0
	return d.printer.Print(doc)
}

// enumsResolveOptions are enums resolve's argument: a name or an integer.
type enumsResolveOptions struct {
	Query string
}

// Validate has nothing to check: exactArgs has made sure there is one argument, and what
// it names (an empty one included) is the registry's to say, with its closest names.
func (o enumsResolveOptions) Validate() error { return nil }

func newEnumsResolveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "resolve NAME|INT",
		Short: "Turn a category or scope name into its integer, or an integer into names",
		Long: strings.TrimSpace(`
Resolve a name (any case; scopes with or without _SCOPE) or an integer. An integer is both a
category and a scope, so it resolves to each that exists. A typo gets the closest names.`),
		Example: examples(`
  outboxctl enums resolve organization
  outboxctl enums resolve ORGANIZATION_MEMBER_UPDATE
  outboxctl enums resolve 32 -o json`),
		Args:              exactArgs(1, "NAME|INT"),
		ValidArgsFunction: a.completeFirstArg(enums.KindAny),
		RunE: func(_ *cobra.Command, args []string) error {
			o := enumsResolveOptions{Query: args[0]}
			if err := o.Validate(); err != nil {
				return err
			}
			return runEnumsResolve(a.factory(), o)
		},
	}
}

// runEnumsResolve prints what o.Query names: one line per match by default (what runbooks
// grep for, on a terminal or not), a table or JSON with -o.
func runEnumsResolve(d factory, o enumsResolveOptions) error {
	reg, err := d.registry()
	if err != nil {
		return err
	}
	res, err := reg.Resolve(o.Query)
	if err != nil {
		return err
	}
	if d.format.lines {
		return d.printer.Lines(report.ResolvedLines(reg, res))
	}
	return d.printer.Print(report.Resolved(reg, res))
}

// enumsLintOptions are enums lint's argument: the category.py to check.
type enumsLintOptions struct {
	Path string
	// MaxBytes caps the file (--max-enums-bytes).
	MaxBytes int64
}

// Validate has nothing to check: exactArgs has made sure there is one argument, and
// reading the file says whether it is one.
func (o enumsLintOptions) Validate() error { return nil }

func newEnumsLintCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "lint PATH/category.py",
		Short: "Check a category.py the way Sentry's import-time assertions do",
		Long: strings.TrimSpace(`
Parse a Sentry category.py (as text; nothing is run) and report, one line each, categories
registered to no scope or to several, integers used twice, and registrations of names that
are not categories. Exits 1 when there is any problem, 0 when there is none.`),
		Example: examples(`
  outboxctl enums lint ~/sentry/src/sentry/hybridcloud/outbox/category.py`),
		Args: exactArgs(1, "PATH/category.py"),
		RunE: func(_ *cobra.Command, args []string) error {
			o := enumsLintOptions{Path: args[0], MaxBytes: int64(a.g.MaxEnums)}
			if err := o.Validate(); err != nil {
				return err
			}
			return runEnumsLint(a.factory(), o)
		},
	}
}

// runEnumsLint reports the problems of o.Path, one line each (or as rows with -o), and
// exits 1 when there is any.
func runEnumsLint(d factory, o enumsLintOptions) error {
	src, err := enums.LoadFile(o.Path, o.MaxBytes)
	if err != nil {
		return err
	}
	problems := enums.Lint(src)
	if d.printer.Structured() {
		err = d.printer.Print(report.Problems(o.Path, problems))
	} else {
		err = d.printer.Lines(report.ProblemLines(o.Path, problems))
	}
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return failuref("%d problem(s) in %s", len(problems), o.Path)
	}
	d.printer.Notef("%s: %d categories, %d scopes, no problems", o.Path, len(src.Categories), len(src.Scopes))
	return nil
}
