package enums

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ResolveError is what the resolver says about a name or integer it cannot place. It is a
// usage error: the operator typed something the registry does not hold.
type ResolveError struct {
	Kind        Kind
	Input       string
	Reason      string
	Suggestions []string
	Hint        string
}

func (e *ResolveError) Error() string {
	var b strings.Builder
	b.WriteString(e.Reason)
	if len(e.Suggestions) > 0 {
		b.WriteString("; did you mean ")
		b.WriteString(joinOr(e.Suggestions))
		b.WriteString("?")
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// UsageError marks the error as the operator's input, not a failure (exit code 2).
func (e *ResolveError) UsageError() bool { return true }

// RawPrefix lets an operator query an integer the registry does not know, e.g. a category
// added after this build: "raw:49". It is deliberately explicit so typos are still caught.
const RawPrefix = "raw:"

// Resolved is the result of resolving a name of either kind.
type Resolved struct {
	Kind     Kind
	Category Category
	Scope    Scope
	// Raw is true for a "raw:N" integer the registry does not know; only Value is set.
	Raw bool
}

// Value is the integer of the resolved name.
func (r Resolved) Value() int {
	if r.Kind == KindScope {
		return r.Scope.Value
	}
	return r.Category.Value
}

// Name is the canonical name of the resolved value (UNKNOWN(n) for raw integers).
func (r Resolved) Name() string {
	if r.Kind == KindScope {
		return r.Scope.Name
	}
	return r.Category.Name
}

// ResolveCategory resolves what an operator typed where a category is expected: the exact
// name in any case, or its integer. A scope name gets an error saying so.
func (r *Registry) ResolveCategory(input string) (Category, error) {
	res, err := r.resolve(input, KindCategory)
	if err != nil {
		return Category{}, err
	}
	return res.Category, nil
}

// ResolveScope resolves what an operator typed where a scope is expected: the exact name in
// any case, with or without the _SCOPE suffix, or its integer.
func (r *Registry) ResolveScope(input string) (Scope, error) {
	res, err := r.resolve(input, KindScope)
	if err != nil {
		return Scope{}, err
	}
	return res.Scope, nil
}

// Resolve resolves a name of either kind. A bare integer is ambiguous between the two
// enums; it resolves to every match, category first.
func (r *Registry) Resolve(input string) ([]Resolved, error) {
	if n, isInt, err := parseInt(input); isInt {
		if err != nil {
			return nil, &ResolveError{Kind: KindAny, Input: input, Reason: err.Error()}
		}
		var out []Resolved
		if c, ok := r.CategoryByValue(n); ok {
			out = append(out, Resolved{Kind: KindCategory, Category: c})
		}
		if s, ok := r.ScopeByValue(n); ok {
			out = append(out, Resolved{Kind: KindScope, Scope: s})
		}
		if len(out) == 0 {
			return nil, r.unknownInt(KindAny, input, n)
		}
		return out, nil
	}
	res, err := r.resolve(input, KindAny)
	if err != nil {
		return nil, err
	}
	return []Resolved{res}, nil
}

func (r *Registry) resolve(input string, kind Kind) (Resolved, error) {
	trimmed := strings.TrimSpace(input)
	if trimmed == "" {
		return Resolved{}, &ResolveError{Kind: kind, Input: input, Reason: fmt.Sprintf("empty %s", kind),
			Hint: "run `outboxctl enums list` to see the names"}
	}
	if raw, ok := strings.CutPrefix(strings.ToLower(trimmed), RawPrefix); ok && kind != KindAny {
		n, isInt, err := parseInt(raw)
		if !isInt || err != nil {
			return Resolved{}, &ResolveError{Kind: kind, Input: input,
				Reason: fmt.Sprintf("%q: %s takes a non-negative integer, e.g. %s49", input, RawPrefix, RawPrefix)}
		}
		if kind == KindScope {
			return Resolved{Kind: kind, Raw: true, Scope: Scope{Name: r.ScopeName(n), Value: n}}, nil
		}
		return Resolved{Kind: kind, Raw: true, Category: Category{Name: r.CategoryName(n), Value: n, Scope: -1}}, nil
	}
	if n, isInt, err := parseInt(trimmed); isInt {
		if err != nil {
			return Resolved{}, &ResolveError{Kind: kind, Input: input, Reason: err.Error()}
		}
		if kind == KindScope {
			if s, ok := r.ScopeByValue(n); ok {
				return Resolved{Kind: KindScope, Scope: s}, nil
			}
		} else if c, ok := r.CategoryByValue(n); ok {
			return Resolved{Kind: KindCategory, Category: c}, nil
		}
		return Resolved{}, r.unknownInt(kind, input, n)
	}

	key := normalize(trimmed)
	if kind != KindScope {
		if i, ok := r.catByName[key]; ok {
			return Resolved{Kind: KindCategory, Category: r.categories[i]}, nil
		}
	}
	if kind != KindCategory {
		if i, ok := r.scpByName[key]; ok {
			return Resolved{Kind: KindScope, Scope: r.scopes[i]}, nil
		}
		if i, ok := r.scpByName[key+"_SCOPE"]; ok {
			return Resolved{Kind: KindScope, Scope: r.scopes[i]}, nil
		}
	}

	// Right name, wrong enum: say which enum it belongs to, and what to use instead.
	if kind == KindScope {
		if i, ok := r.catByName[key]; ok {
			c := r.categories[i]
			return Resolved{}, &ResolveError{Kind: kind, Input: input,
				Reason: fmt.Sprintf("%s is a category (%d), not a scope; its scope is %s (%d)",
					c.Name, c.Value, r.ScopeName(c.Scope), c.Scope)}
		}
	}
	if kind == KindCategory {
		if s, ok := r.scopeByLooseName(key); ok {
			return Resolved{}, &ResolveError{Kind: kind, Input: input,
				Reason: fmt.Sprintf("%s is a scope (%d), not a category; its categories include %s",
					s.Name, s.Value, r.sampleCategories(s))}
		}
	}
	return Resolved{}, &ResolveError{
		Kind: kind, Input: input,
		Reason:      fmt.Sprintf("unknown %s %q", kind, trimmed),
		Suggestions: r.suggest(key, kind),
		Hint:        "run `outboxctl enums list` to see every name",
	}
}

func (r *Registry) scopeByLooseName(key string) (Scope, bool) {
	if i, ok := r.scpByName[key]; ok {
		return r.scopes[i], true
	}
	if i, ok := r.scpByName[key+"_SCOPE"]; ok {
		return r.scopes[i], true
	}
	return Scope{}, false
}

func (r *Registry) sampleCategories(s Scope) string {
	names := make([]string, 0, 3)
	for _, v := range s.Categories {
		if len(names) == 3 {
			names = append(names, "…")
			break
		}
		names = append(names, r.CategoryName(v))
	}
	if len(names) == 0 {
		return "none (the scope is retired)"
	}
	return strings.Join(names, ", ")
}

func (r *Registry) unknownInt(kind Kind, input string, n int) error {
	var lo, hi int
	switch kind {
	case KindScope:
		lo, hi = r.scopes[0].Value, r.scopes[len(r.scopes)-1].Value
	default:
		lo, hi = r.categories[0].Value, r.categories[len(r.categories)-1].Value
	}
	hint := "pass --enums PATH/category.py from your Sentry checkout if it is newer than this build"
	if kind != KindAny {
		hint += fmt.Sprintf(", or write %s%d to query the integer as it is", RawPrefix, n)
	}
	return &ResolveError{Kind: kind, Input: input,
		Reason: fmt.Sprintf("%s %d is not in the registry (known: %d–%d)", kind, n, lo, hi),
		Hint:   hint}
}

// parseInt reports whether s looks like an integer and, if so, whether it is a usable one.
func parseInt(s string) (int, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if body == "" {
		return 0, false, nil
	}
	for _, ch := range body {
		if ch < '0' || ch > '9' {
			return 0, false, nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return 0, true, fmt.Errorf("%s is out of range: enum values are integers from 0 to %d", s, math.MaxInt32)
	}
	if n < 0 {
		return 0, true, fmt.Errorf("%s is negative: enum values are integers from 0 to %d", s, math.MaxInt32)
	}
	return int(n), true, nil
}

// suggest returns up to three names close to key, closest first.
func (r *Registry) suggest(key string, kind Kind) []string {
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, name := range r.Names(kind) {
		d := distance(key, name)
		if trimmed, ok := strings.CutSuffix(name, "_SCOPE"); ok {
			d = min(d, distance(key, trimmed))
		}
		limit := max(2, len(key)/4)
		switch {
		case d <= limit:
			cands = append(cands, cand{name, d})
		case len(key) >= 4 && strings.Contains(name, key), abbreviates(key, name),
			len(key) >= 2 && strings.HasPrefix(name, key): // ORG for ORGANIZATION_SCOPE
			cands = append(cands, cand{name, limit + 1})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	out := make([]string, 0, 3)
	for _, c := range cands {
		if len(out) == 3 {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// abbreviates reports whether key shortens name word by word (ORG_UPDATE for
// ORGANIZATION_UPDATE, ORG_MEMBER_UPD for ORGANIZATION_MEMBER_UPDATE): the same number of
// underscore-separated words, each a prefix of name's. Operators shorten long names this way,
// and no edit distance finds them.
func abbreviates(key, name string) bool {
	kw, nw := strings.Split(key, "_"), strings.Split(name, "_")
	if len(kw) != len(nw) || key == name {
		return false
	}
	for i, w := range kw {
		if w == "" || !strings.HasPrefix(nw[i], w) {
			return false
		}
	}
	return true
}

// distance is the Damerau–Levenshtein (optimal string alignment) distance, so that a swapped
// pair of letters counts as one typo.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func joinOr(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
