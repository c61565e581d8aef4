package enums

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Category is a resolved OutboxCategory.
type Category struct {
	Name    string `json:"name"`
	Value   int    `json:"value"`
	Scope   int    `json:"scope"`
	Retired bool   `json:"retired"`
	// RetiredIn is the era a retired category retired in ("" for a live one): see
	// retiredIn.
	RetiredIn string `json:"retired_in"`
	// ObjectIsShard is true when rows of this category carry the shard identifier as their
	// object identifier, so an object lookup can use the shard index.
	ObjectIsShard bool `json:"object_is_shard"`
}

// Scope is a resolved OutboxScope.
type Scope struct {
	Name    string `json:"name"`
	Value   int    `json:"value"`
	Retired bool   `json:"retired"`
	// Tag is OutboxScope.get_tag_name: what the shard identifier means.
	Tag string `json:"tag"`
	// KillswitchOption is the option listing disabled shards of this scope, or "".
	KillswitchOption string `json:"killswitch_option,omitempty"`
	Categories       []int  `json:"categories"`
}

// Registry maps names to integers and back. It is immutable once built.
type Registry struct {
	origin     string
	categories []Category // sorted by value
	scopes     []Scope    // sorted by value
	catByValue map[int]int
	scpByValue map[int]int
	catByName  map[string]int // upper-case name -> index
	scpByName  map[string]int
}

// Builtin returns the registry compiled into outboxctl.
func Builtin() *Registry {
	r, err := Build(builtinSource)
	if err != nil {
		// The built-in table is covered by tests; reaching this is a programming error.
		panic("enums: built-in registry is inconsistent: " + err.Error())
	}
	return r
}

// BuiltinSource returns a copy of the built-in registry in its written form, for lint.
func BuiltinSource() Source {
	s := builtinSource
	s.Categories = append([]CategoryDef(nil), builtinSource.Categories...)
	s.Scopes = append([]ScopeDef(nil), builtinSource.Scopes...)
	for i := range s.Scopes {
		// Each scope's list too: a caller changing it must not change the built-in registry.
		s.Scopes[i].Categories = append([]string(nil), s.Scopes[i].Categories...)
	}
	return s
}

// Build checks a Source and turns it into a Registry. It refuses what Sentry's import-time
// assertions refuse (a category in several scopes or in none) and reused integers, naming
// the first problem; Lint lists them all.
func Build(src Source) (*Registry, error) {
	if problems := Lint(src); len(problems) > 0 {
		more := ""
		if len(problems) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(problems)-1)
		}
		return nil, fmt.Errorf("%s: %s%s", src.Origin, problems[0].Message, more)
	}
	r := &Registry{
		origin:     src.Origin,
		catByValue: map[int]int{},
		scpByValue: map[int]int{},
		catByName:  map[string]int{},
		scpByName:  map[string]int{},
	}
	scopeOf := map[string]ScopeDef{}
	for _, s := range src.Scopes {
		for _, c := range s.Categories {
			scopeOf[c] = s
		}
	}
	for _, c := range src.Categories {
		s := scopeOf[c.Name]
		era, retired := retiredIn(c)
		r.categories = append(r.categories, Category{
			Name: c.Name, Value: c.Value, Scope: s.Value, Retired: retired, RetiredIn: era,
			ObjectIsShard: objectIsShard[c.Name] != "" && objectIsShard[c.Name] == s.Name,
		})
	}
	sort.Slice(r.categories, func(i, j int) bool { return r.categories[i].Value < r.categories[j].Value })
	for i, c := range r.categories {
		r.catByValue[c.Value] = i
		r.catByName[c.Name] = i
	}
	// A retired category answers to the names it had and has: 26 is ORGANIZATION_MEMBER_TEAM_UPDATE
	// in a checkout before Aug 2026 and UNUSED_EIGHT after (one value, never reused).
	for _, k := range knownRetirements {
		if i, ok := r.catByValue[k.value]; ok {
			for _, n := range k.names {
				if _, taken := r.catByName[n]; !taken {
					r.catByName[n] = i
				}
			}
		}
	}
	for _, s := range src.Scopes {
		sc := Scope{
			Name: s.Name, Value: s.Value, Retired: s.Retired,
			Tag: scopeTags[s.Name], KillswitchOption: killswitchOptions[s.Name],
			Categories: []int{},
		}
		if sc.Tag == "" {
			sc.Tag = "shard_identifier"
		}
		for _, name := range s.Categories {
			sc.Categories = append(sc.Categories, r.categories[r.catByName[name]].Value)
		}
		sort.Ints(sc.Categories)
		r.scopes = append(r.scopes, sc)
	}
	sort.Slice(r.scopes, func(i, j int) bool { return r.scopes[i].Value < r.scopes[j].Value })
	for i, s := range r.scopes {
		r.scpByValue[s.Value] = i
		r.scpByName[s.Name] = i
	}
	return r, nil
}

// Origin says where the registry came from.
func (r *Registry) Origin() string { return r.origin }

// Categories returns every category, by value.
func (r *Registry) Categories() []Category { return append([]Category(nil), r.categories...) }

// Scopes returns every scope, by value.
func (r *Registry) Scopes() []Scope { return append([]Scope(nil), r.scopes...) }

// CategoryByValue looks a category up by its integer.
func (r *Registry) CategoryByValue(v int) (Category, bool) {
	i, ok := r.catByValue[v]
	if !ok {
		return Category{}, false
	}
	return r.categories[i], true
}

// ScopeByValue looks a scope up by its integer.
func (r *Registry) ScopeByValue(v int) (Scope, bool) {
	i, ok := r.scpByValue[v]
	if !ok {
		return Scope{}, false
	}
	return r.scopes[i], true
}

// knownRetirement is a category Sentry retired after the built-in registry's reading
// (reference §10.1), by value: the names it had and has, and when.
type knownRetirement struct {
	value int
	names []string
	era   string
}

// knownRetirements are the retirements the reference records, applied to the built-in
// registry and to an --enums file alike, so both mark a category the same way.
var knownRetirements = []knownRetirement{ //nolint:gochecknoglobals // constant table
	{value: 26, names: []string{"ORGANIZATION_MEMBER_TEAM_UPDATE", "UNUSED_EIGHT"},
		// PR #121810: no receiver ever consumed it; its replica was torn down in July 2026.
		era: "Aug 2026, as UNUSED_EIGHT"},
}

// unusedName is Sentry's naming of a retired category kept so stored rows still resolve
// (UNUSED_ONE, UNUSUED_THREE (sic), UNUSED_EIGHT, …).
func unusedName(name string) bool {
	return strings.HasPrefix(name, "UNUSED_") || strings.HasPrefix(name, "UNUSUED_")
}

// retiredIn says whether c is retired and the era it retired in: a known retirement's era;
// UNUSED_FIVE..UNUSED_SEVEN, which a current Sentry has, UNVERIFIED (what they replaced);
// any other retired category of the values the reference read (0–48) by May 2026; a newer
// one after May 2026, unverified.
func retiredIn(c CategoryDef) (string, bool) {
	for _, k := range knownRetirements {
		if k.value == c.Value && slices.Contains(k.names, c.Name) {
			return k.era, true
		}
	}
	switch c.Name {
	case "UNUSED_FIVE", "UNUSED_SIX", "UNUSED_SEVEN":
		// Which categories they replaced is not known (reference §10.1).
		return "after May 2026, UNVERIFIED", true
	}
	if !c.Retired && !unusedName(c.Name) {
		return "", false
	}
	if c.Value <= 48 {
		return "by May 2026", true
	}
	return "after May 2026, UNVERIFIED", true
}

// CategoryName names a category integer met in a database. Integers the registry does not
// know are shown as UNKNOWN(n), never rejected: Sentry only ever appends values, and rows
// outlive the code that wrote them.
func (r *Registry) CategoryName(v int) string {
	if c, ok := r.CategoryByValue(v); ok {
		return c.Name
	}
	return unknown(v)
}

// ScopeName names a scope integer met in a database; see CategoryName.
func (r *Registry) ScopeName(v int) string {
	if s, ok := r.ScopeByValue(v); ok {
		return s.Name
	}
	return unknown(v)
}

func unknown(v int) string { return fmt.Sprintf("UNKNOWN(%d)", v) }

// Names returns every category and scope name, for shell completion.
func (r *Registry) Names(kind Kind) []string {
	var out []string
	if kind == KindCategory || kind == KindAny {
		for _, c := range r.categories {
			out = append(out, c.Name)
		}
	}
	if kind == KindScope || kind == KindAny {
		for _, s := range r.scopes {
			out = append(out, s.Name)
		}
	}
	return out
}

// Kind says which enum a name belongs to.
type Kind int

// The kinds of name the resolver knows.
const (
	KindAny Kind = iota
	KindCategory
	KindScope
)

func (k Kind) String() string {
	switch k {
	case KindCategory:
		return "category"
	case KindScope:
		return "scope"
	case KindAny:
		return "category or scope"
	}
	return "enum"
}

// normalize folds what an operator types into a registry key: trimmed, upper case, with
// dashes and spaces read as underscores.
func normalize(s string) string {
	s = strings.TrimSpace(s)
	s = strings.NewReplacer("-", "_", " ", "_").Replace(s)
	return strings.ToUpper(s)
}
