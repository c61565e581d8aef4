package report

import (
	"fmt"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The documents of outboxctl enums: their json tags are the JSON keys.

// CategoryRow is one category of enums list.
type CategoryRow struct {
	Value         int    `json:"value"`
	Name          string `json:"name"`
	ScopeValue    int    `json:"scope_value" render:"machine"`
	Scope         string `json:"scope"`
	Retired       bool   `json:"retired"`
	ObjectIsShard bool   `json:"object_is_shard" label:"object is shard"`
	// RetiredIn is the era a retired category retired in ("" for a live one).
	RetiredIn string `json:"retired_in" label:"retired in"`
}

// ScopeRow is one scope of enums list: categories are its categories' names.
type ScopeRow struct {
	Value            int    `json:"value"`
	Name             string `json:"name"`
	Tag              string `json:"tag"`
	Retired          bool   `json:"retired"`
	KillswitchOption string `json:"killswitch_option" label:"kill switch"`
	Categories       []any  `json:"categories"`
}

// ResolvedRow is one match of enums resolve: scope is a category's scope (null for a scope).
type ResolvedRow struct {
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	Value   int     `json:"value"`
	Scope   *string `json:"scope"`
	Retired bool    `json:"retired"`
}

// ProblemRow is one problem enums lint found in the file at path.
type ProblemRow struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Categories is enums list's categories section.
func Categories(reg *enums.Registry) render.Section {
	var rows []CategoryRow
	for _, c := range reg.Categories() {
		rows = append(rows, CategoryRow{Value: c.Value, Name: c.Name, ScopeValue: c.Scope, Scope: reg.ScopeName(c.Scope), Retired: c.Retired, ObjectIsShard: c.ObjectIsShard, RetiredIn: c.RetiredIn})
	}
	return render.Section{Name: "categories", Title: "Categories", Table: render.TableOf(rows)}
}

// Scopes is enums list's scopes section.
func Scopes(reg *enums.Registry) render.Section {
	var rows []ScopeRow
	for _, s := range reg.Scopes() {
		names := make([]any, 0, len(s.Categories))
		for _, v := range s.Categories {
			names = append(names, reg.CategoryName(v))
		}
		rows = append(rows, ScopeRow{Value: s.Value, Name: s.Name, Tag: s.Tag, Retired: s.Retired, KillswitchOption: s.KillswitchOption, Categories: names})
	}
	return render.Section{Name: "scopes", Title: "Scopes", Table: render.TableOf(rows)}
}

// Resolved is enums resolve's document.
func Resolved(reg *enums.Registry, res []enums.Resolved) render.Doc {
	var rows []ResolvedRow
	for _, r := range res {
		switch r.Kind {
		case enums.KindCategory:
			scope := reg.ScopeName(r.Category.Scope)
			rows = append(rows, ResolvedRow{Kind: "category", Name: r.Category.Name, Value: r.Category.Value, Scope: &scope, Retired: r.Category.Retired})
		case enums.KindScope:
			rows = append(rows, ResolvedRow{Kind: "scope", Name: r.Scope.Name, Value: r.Scope.Value, Retired: r.Scope.Retired})
		case enums.KindAny:
		}
	}
	t := render.TableOf(rows)
	if len(t.Rows) == 0 {
		t.Rows = nil
	}
	return render.Doc{{Name: "resolved", Table: t}}
}

// Problems is enums lint's document (in the machine formats).
func Problems(path string, problems []enums.Problem) render.Doc {
	var rows []ProblemRow
	for _, p := range problems {
		rows = append(rows, ProblemRow{Path: path, Line: p.Line, Message: p.Message})
	}
	t := render.TableOf(rows)
	if len(t.Rows) == 0 {
		t.Rows = nil
	}
	return render.Doc{{Name: "problems", Table: t}}
}

// ResolvedLines are enums resolve's default output, one line per match (what runbooks grep
// for, on a terminal or not): "NAME (N)  category in SCOPE" or "NAME (N)  scope".
func ResolvedLines(reg *enums.Registry, res []enums.Resolved) []string {
	lines := make([]string, 0, len(res))
	for _, r := range res {
		if r.Kind == enums.KindCategory {
			lines = append(lines, fmt.Sprintf("%s (%d)  category in %s", r.Name(), r.Value(), reg.ScopeName(r.Category.Scope)))
		} else {
			lines = append(lines, fmt.Sprintf("%s (%d)  scope", r.Name(), r.Value()))
		}
	}
	return lines
}

// ProblemLines are enums lint's default output, one "PATH:LINE: message" line per problem,
// as a compiler says them.
func ProblemLines(path string, problems []enums.Problem) []string {
	lines := make([]string, 0, len(problems))
	for _, pr := range problems {
		lines = append(lines, fmt.Sprintf("%s:%d: %s", path, pr.Line, pr.Message))
	}
	return lines
}
