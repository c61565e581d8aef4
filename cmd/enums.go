package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/render"
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

func newEnumsListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list [categories|scopes]",
		Short: "List every category and scope with its integer",
		Example: examples(`
  outboxctl enums list
  outboxctl enums list scopes -o json
  outboxctl enums list categories --enums ~/sentry/src/sentry/hybridcloud/outbox/category.py`),
		ValidArgs: []string{"categories", "scopes"},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 || (len(args) == 1 && args[0] != "categories" && args[0] != "scopes") {
				return usageErrorf("outboxctl enums list scopes", "enums list takes categories, scopes or nothing; got %q", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			reg, err := a.registry()
			if err != nil {
				return err
			}
			which := ""
			if len(args) == 1 {
				which = args[0]
			}
			var doc render.Doc
			if which != "scopes" {
				t := &render.Table{Columns: []string{"value", "name", "scope_value", "scope", "retired", "object_is_shard"},
					Labels:      map[string]string{"object_is_shard": "object is shard"},
					MachineOnly: map[string]bool{"scope_value": true}}
				for _, cat := range reg.Categories() {
					t.Rows = append(t.Rows, []any{cat.Value, cat.Name, cat.Scope, reg.ScopeName(cat.Scope), cat.Retired, cat.ObjectIsShard})
				}
				doc = append(doc, render.Section{Name: "categories", Title: "Categories", Table: t})
			}
			if which != "categories" {
				t := &render.Table{Columns: []string{"value", "name", "tag", "retired", "killswitch_option", "categories"},
					Labels: map[string]string{"killswitch_option": "kill switch"}}
				for _, s := range reg.Scopes() {
					names := make([]any, 0, len(s.Categories))
					for _, v := range s.Categories {
						names = append(names, reg.CategoryName(v))
					}
					t.Rows = append(t.Rows, []any{s.Value, s.Name, s.Tag, s.Retired, s.KillswitchOption, names})
				}
				doc = append(doc, render.Section{Name: "scopes", Title: "Scopes", Table: t})
			}
			p := a.printer()
			p.MaxCell = 0
			return p.Print(doc)
		},
	}
}

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
			reg, err := a.registry()
			if err != nil {
				return err
			}
			res, err := reg.Resolve(args[0])
			if err != nil {
				return err
			}
			t := &render.Table{Columns: []string{"kind", "name", "value", "scope", "retired"}}
			for _, r := range res {
				switch r.Kind {
				case enums.KindCategory:
					t.Rows = append(t.Rows, []any{"category", r.Category.Name, r.Category.Value, reg.ScopeName(r.Category.Scope), r.Category.Retired})
				case enums.KindScope:
					t.Rows = append(t.Rows, []any{"scope", r.Scope.Name, r.Scope.Value, nil, r.Scope.Retired})
				case enums.KindAny:
				}
			}
			p := a.printer()
			// The default is one line per match, "ORGANIZATION_SCOPE (0)", on a terminal or not:
			// it is what runbooks grep for. -o picks a table or JSON.
			if a.g.Output == "" {
				for _, r := range res {
					line := fmt.Sprintf("%s (%d)", r.Name(), r.Value())
					if r.Kind == enums.KindCategory {
						line += fmt.Sprintf("  category in %s", reg.ScopeName(r.Category.Scope))
					} else {
						line += "  scope"
					}
					fmt.Fprintln(a.io.Out, line)
				}
				return nil
			}
			return p.Print(render.Doc{{Name: "resolved", Table: t}})
		},
	}
}

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
			src, err := enums.LoadFile(args[0])
			if err != nil {
				return err
			}
			problems := enums.Lint(src)
			p := a.printer()
			if p.Structured() {
				t := &render.Table{Columns: []string{"path", "line", "message"}}
				for _, pr := range problems {
					t.Rows = append(t.Rows, []any{args[0], pr.Line, pr.Message})
				}
				if err := p.Print(render.Doc{{Name: "problems", Table: t}}); err != nil {
					return err
				}
			} else {
				for _, pr := range problems {
					fmt.Fprintf(a.io.Out, "%s:%d: %s\n", render.Escape(args[0]), pr.Line, render.Escape(pr.Message))
				}
			}
			if len(problems) > 0 {
				return &exitError{code: ExitError, msg: fmt.Sprintf("%d problem(s) in %s", len(problems), args[0])}
			}
			fmt.Fprintf(a.io.Err, "%s: %d categories, %d scopes, no problems\n", args[0], len(src.Categories), len(src.Scopes))
			return nil
		},
	}
}
