package enums

import (
	"fmt"
	"sort"
	"strings"
)

// Category is a resolved OutboxCategory.
type Category struct {
	Name    string `json:"name"`
	Value   int    `json:"value"`
	Scope   int    `json:"scope"`
	Retired bool   `json:"retired"`
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
		r.categories = append(r.categories, Category{
			Name: c.Name, Value: c.Value, Scope: s.Value, Retired: c.Retired,
			ObjectIsShard: objectIsShard[c.Name] != "" && objectIsShard[c.Name] == s.Name,
		})
	}
	sort.Slice(r.categories, func(i, j int) bool { return r.categories[i].Value < r.categories[j].Value })
	for i, c := range r.categories {
		r.catByValue[c.Value] = i
		r.catByName[c.Name] = i
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
