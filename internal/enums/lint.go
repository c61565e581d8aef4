package enums

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing Lint found, with the line it concerns (0 when unknown).
type Problem struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (p Problem) String() string { return p.Message }

// Lint checks a registry the way Sentry's import-time assertions do, and a little more: every
// category is registered to exactly one scope, no integer is used twice within an enum, no
// name is declared twice, and every registration names a real category. Problems come back
// in line order.
func Lint(src Source) []Problem {
	var out []Problem
	add := func(line int, format string, args ...any) {
		out = append(out, Problem{Line: line, Message: fmt.Sprintf(format, args...)})
	}

	catByName := map[string]CategoryDef{}
	catByValue := map[int][]CategoryDef{}
	for _, c := range src.Categories {
		if prev, ok := catByName[c.Name]; ok {
			add(c.Line, "category %s is declared twice (lines %d and %d)", c.Name, prev.Line, c.Line)
			continue
		}
		catByName[c.Name] = c
		catByValue[c.Value] = append(catByValue[c.Value], c)
	}
	for _, v := range sortedKeys(catByValue) {
		if defs := catByValue[v]; len(defs) > 1 {
			add(defs[1].Line, "category integer %d is reused by %s", v, names(defs, func(d CategoryDef) string { return d.Name }))
		}
	}

	scopeByValue := map[int][]ScopeDef{}
	scopeNames := map[string]bool{}
	registeredIn := map[string][]string{}
	for _, s := range src.Scopes {
		if scopeNames[s.Name] {
			add(s.Line, "scope %s is declared twice", s.Name)
			continue
		}
		scopeNames[s.Name] = true
		scopeByValue[s.Value] = append(scopeByValue[s.Value], s)
		seen := map[string]bool{}
		for _, c := range s.Categories {
			if _, ok := catByName[c]; !ok {
				add(s.Line, "scope %s registers OutboxCategory.%s, which is not a member of OutboxCategory", s.Name, c)
				continue
			}
			if seen[c] {
				continue
			}
			seen[c] = true
			registeredIn[c] = append(registeredIn[c], s.Name)
		}
	}
	for _, v := range sortedKeys(scopeByValue) {
		if defs := scopeByValue[v]; len(defs) > 1 {
			add(defs[1].Line, "scope integer %d is reused by %s", v, names(defs, func(d ScopeDef) string { return d.Name }))
		}
	}
	for _, c := range src.Categories {
		if catByName[c.Name].Line != c.Line {
			continue // the duplicate declaration was reported above
		}
		switch scopes := registeredIn[c.Name]; len(scopes) {
		case 0:
			add(c.Line, "category %s (%d) is not registered to any scope", c.Name, c.Value)
		case 1:
		default:
			add(c.Line, "category %s (%d) is registered to several scopes: %s", c.Name, c.Value, strings.Join(scopes, ", "))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func names[T any](defs []T, name func(T) string) string {
	parts := make([]string, len(defs))
	for i, d := range defs {
		parts[i] = name(d)
	}
	return strings.Join(parts, " and ")
}
