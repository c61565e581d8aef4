package enums

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinCoversReference(t *testing.T) {
	t.Parallel()
	r := Builtin()
	cats, scopes := r.Categories(), r.Scopes()
	if len(cats) != 49 || cats[0].Value != 0 || cats[48].Value != 48 {
		t.Fatalf("want categories 0–48, got %d from %d to %d", len(cats), cats[0].Value, cats[len(cats)-1].Value)
	}
	if len(scopes) != 13 || scopes[12].Value != 12 {
		t.Fatalf("want scopes 0–12, got %d", len(scopes))
	}
	for _, c := range cats {
		if _, ok := r.ScopeByValue(c.Scope); !ok {
			t.Errorf("category %s has no scope", c.Name)
		}
	}
	spot := map[string]struct {
		value, scope int
		retired      bool
	}{
		"USER_UPDATE":                  {0, 1, false},
		"WEBHOOK_PROXY":                {1, 2, true},
		"ORGANIZATION_MEMBER_UPDATE":   {3, 0, false},
		"AUDIT_LOG_EVENT":              {5, 3, false},
		"PROVISION_ORGANIZATION":       {17, 8, false},
		"DISABLE_AUTH_PROVIDER":        {20, 0, true},
		"API_TOKEN_UPDATE":             {32, 11, false},
		"EXTERNAL_ACTOR_UPDATE":        {35, 5, false},
		"RELOCATION_EXPORT_REPLY":      {37, 10, true},
		"SENTRY_APP_NORMALIZE_ACTIONS": {44, 12, false},
		"SEER_RUN_CREATE":              {48, 0, false},
	}
	for name, want := range spot {
		c, err := r.ResolveCategory(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Value != want.value || c.Scope != want.scope || c.Retired != want.retired {
			t.Errorf("%s = %+v, want %+v", name, c, want)
		}
	}
	org, _ := r.ScopeByValue(0)
	if org.Tag != "organization_id" || org.KillswitchOption != "hybrid_cloud.authentication.disabled_organization_shards" {
		t.Errorf("ORGANIZATION_SCOPE = %+v", org)
	}
	if s, _ := r.ScopeByValue(3); s.Tag != "shard_identifier" || s.KillswitchOption != "" {
		t.Errorf("AUDIT_LOG_SCOPE = %+v", s)
	}
	for _, s := range []int{2, 7, 10} {
		if sc, _ := r.ScopeByValue(s); !sc.Retired {
			t.Errorf("scope %d should be retired", s)
		}
	}
}

func TestBuiltinPassesItsOwnLint(t *testing.T) {
	t.Parallel()
	if problems := Lint(BuiltinSource()); len(problems) != 0 {
		t.Fatalf("built-in registry has lint problems: %v", problems)
	}
}

func TestObjectIsShard(t *testing.T) {
	t.Parallel()
	r := Builtin()
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"ORGANIZATION_UPDATE", true}, {"USER_UPDATE", true}, {"INTEGRATION_UPDATE", true},
		{"API_APPLICATION_UPDATE", true}, {"API_TOKEN_UPDATE", true}, {"PROVISION_ORGANIZATION", true},
		{"ORGANIZATION_MEMBER_UPDATE", false}, {"AUDIT_LOG_EVENT", false}, {"SEER_RUN_CREATE", false},
	} {
		c, err := r.ResolveCategory(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if c.ObjectIsShard != tt.want {
			t.Errorf("%s.ObjectIsShard = %v, want %v", tt.name, c.ObjectIsShard, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	r := Builtin()
	tests := []struct {
		name     string
		kind     Kind
		input    string
		want     string // canonical name on success
		wantErr  string // substring of the error
		wantSugg []string
	}{
		{name: "ScopeExact", kind: KindScope, input: "ORGANIZATION_SCOPE", want: "ORGANIZATION_SCOPE"},
		{name: "ScopeLowerNoSuffix", kind: KindScope, input: "organization", want: "ORGANIZATION_SCOPE"},
		{name: "ScopeMixedCase", kind: KindScope, input: "User_Scope", want: "USER_SCOPE"},
		{name: "ScopeDashes", kind: KindScope, input: "audit-log", want: "AUDIT_LOG_SCOPE"},
		{name: "ScopeInt", kind: KindScope, input: "11", want: "API_TOKEN_SCOPE"},
		{name: "ScopeIntSpaces", kind: KindScope, input: " 0 ", want: "ORGANIZATION_SCOPE"},
		{name: "CategoryExact", kind: KindCategory, input: "ORGANIZATION_UPDATE", want: "ORGANIZATION_UPDATE"},
		{name: "CategoryLower", kind: KindCategory, input: "organization_member_update", want: "ORGANIZATION_MEMBER_UPDATE"},
		{name: "CategoryInt", kind: KindCategory, input: "48", want: "SEER_RUN_CREATE"},
		{name: "CategorySic", kind: KindCategory, input: "unusued_three", want: "UNUSUED_THREE"},
		{name: "CategoryRaw", kind: KindCategory, input: "raw:49", want: "UNKNOWN(49)"},
		{name: "ScopeRaw", kind: KindScope, input: "RAW:13", want: "UNKNOWN(13)"},
		{
			name: "CategoryTypo", kind: KindCategory, input: "ORGANIZATON_UPDATE",
			wantErr: `unknown category "ORGANIZATON_UPDATE"`, wantSugg: []string{"ORGANIZATION_UPDATE"},
		},
		{
			name: "CategorySwap", kind: KindCategory, input: "ORGANIZATION_UPDAET",
			wantErr: "unknown category", wantSugg: []string{"ORGANIZATION_UPDATE"},
		},
		{
			name: "ScopeTypo", kind: KindScope, input: "organisation",
			wantErr: "unknown scope", wantSugg: []string{"ORGANIZATION_SCOPE"},
		},
		{name: "CategoryOutOfRange", kind: KindCategory, input: "9999", wantErr: "category 9999 is not in the registry (known: 0–48)"},
		{name: "ScopeOutOfRange", kind: KindScope, input: "13", wantErr: "scope 13 is not in the registry (known: 0–12)"},
		{name: "Negative", kind: KindCategory, input: "-1", wantErr: "-1 is negative"},
		{name: "Huge", kind: KindScope, input: "99999999999999999999", wantErr: "out of range"},
		{name: "Int32Overflow", kind: KindScope, input: "2147483648", wantErr: "out of range"},
		{name: "Empty", kind: KindScope, input: "  ", wantErr: "empty scope"},
		{name: "RawBad", kind: KindCategory, input: "raw:x", wantErr: "raw: takes a non-negative integer"},
		{
			name: "CategoryWhereScope", kind: KindScope, input: "organization_update",
			wantErr: "ORGANIZATION_UPDATE is a category (2), not a scope; its scope is ORGANIZATION_SCOPE (0)",
		},
		{
			name: "ScopeWhereCategory", kind: KindCategory, input: "user",
			wantErr: "USER_SCOPE is a scope (1), not a category",
		},
		{
			name: "ScopeWhereCategoryFull", kind: KindCategory, input: "AUDIT_LOG_SCOPE",
			wantErr: "AUDIT_LOG_SCOPE is a scope (3), not a category; its categories include AUDIT_LOG_EVENT",
		},
		{name: "Nonsense", kind: KindCategory, input: "zzzzzzzz", wantErr: `unknown category "zzzzzzzz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got string
			var err error
			if tt.kind == KindScope {
				var s Scope
				s, err = r.ResolveScope(tt.input)
				got = s.Name
			} else {
				var c Category
				c, err = r.ResolveCategory(tt.input)
				got = c.Name
			}
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("resolved %q to %s, want error %q", tt.input, got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q does not contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error is not one line: %q", err)
				}
				var re *ResolveError
				if !errors.As(err, &re) || !re.UsageError() {
					t.Fatalf("error %T is not a usage ResolveError", err)
				}
				for i, s := range tt.wantSugg {
					if i >= len(re.Suggestions) || re.Suggestions[i] != s {
						t.Fatalf("suggestions = %v, want prefix %v", re.Suggestions, tt.wantSugg)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve %q: %v", tt.input, err)
			}
			if got != tt.want {
				t.Fatalf("resolve %q = %s, want %s", tt.input, got, tt.want)
			}
		})
	}
}

func TestResolveAnyKind(t *testing.T) {
	t.Parallel()
	r := Builtin()
	res, err := r.Resolve("organization")
	if err != nil || len(res) != 1 || res[0].Kind != KindScope || res[0].Value() != 0 {
		t.Fatalf("Resolve(organization) = %+v, %v", res, err)
	}
	res, err = r.Resolve("3")
	if err != nil || len(res) != 2 || res[0].Name() != "ORGANIZATION_MEMBER_UPDATE" || res[1].Name() != "AUDIT_LOG_SCOPE" {
		t.Fatalf("Resolve(3) = %+v, %v", res, err)
	}
	res, err = r.Resolve("40")
	if err != nil || len(res) != 1 || res[0].Kind != KindCategory {
		t.Fatalf("Resolve(40) = %+v, %v", res, err)
	}
	if _, err := r.Resolve("ORGANIZATON_UPDATE"); err == nil || !strings.Contains(err.Error(), "did you mean ORGANIZATION_UPDATE") {
		t.Fatalf("Resolve(typo) error = %v", err)
	}
}

func TestUnknownValuesAreNamedNotRejected(t *testing.T) {
	t.Parallel()
	r := Builtin()
	if got := r.CategoryName(17); got != "PROVISION_ORGANIZATION" {
		t.Fatal(got)
	}
	if got := r.CategoryName(49); got != "UNKNOWN(49)" {
		t.Fatal(got)
	}
	if got := r.ScopeName(14); got != "UNKNOWN(14)" {
		t.Fatal(got)
	}
}

func TestParseRealShape(t *testing.T) {
	t.Parallel()
	src, err := LoadFile("testdata/category.py", 0)
	if err != nil {
		t.Fatal(err)
	}
	if problems := Lint(src); len(problems) != 0 {
		t.Fatalf("lint: %v", problems)
	}
	loaded, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	builtin := Builtin()
	if len(loaded.Categories()) != len(builtin.Categories()) || len(loaded.Scopes()) != len(builtin.Scopes()) {
		t.Fatalf("loaded %d categories / %d scopes", len(loaded.Categories()), len(loaded.Scopes()))
	}
	for i, c := range builtin.Categories() {
		got := loaded.Categories()[i]
		if got.Name != c.Name || got.Value != c.Value || got.Scope != c.Scope || got.Retired != c.Retired || got.ObjectIsShard != c.ObjectIsShard {
			t.Errorf("category %d: loaded %+v, built-in %+v", i, got, c)
		}
	}
	for i, s := range builtin.Scopes() {
		got := loaded.Scopes()[i]
		if got.Name != s.Name || got.Value != s.Value || got.Retired != s.Retired || len(got.Categories) != len(s.Categories) {
			t.Errorf("scope %d: loaded %+v, built-in %+v", i, got, s)
		}
	}
}

func TestLintFindsEveryProblem(t *testing.T) {
	t.Parallel()
	src, err := LoadFile("testdata/category_broken.py", 0)
	if err != nil {
		t.Fatal(err)
	}
	problems := Lint(src)
	var msgs []string
	for _, p := range problems {
		if p.Line <= 0 {
			t.Errorf("problem without a line: %v", p)
		}
		msgs = append(msgs, p.Message)
	}
	want := []string{
		"category integer 48 is reused by SEER_RUN_CREATE and GROUP_ACTION_LOG_EVENT",
		"category NEW_THING (50) is not registered to any scope",
		"category PROJECT_UPDATE (8) is registered to several scopes: ORGANIZATION_SCOPE, USER_SCOPE",
	}
	joined := strings.Join(msgs, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("lint output lacks %q; got:\n%s", w, joined)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(problems), len(want), joined)
	}
	if _, err := Build(src); err == nil {
		t.Fatal("Build accepted a broken registry")
	}
}

func TestParseRejectsOtherFiles(t *testing.T) {
	t.Parallel()
	if _, err := Parse("x.py", []byte("import os\nprint('hi')\n")); err == nil || !strings.Contains(err.Error(), "category.py") {
		t.Fatalf("err = %v", err)
	}
	if _, err := LoadFile("testdata/does-not-exist.py", 0); err == nil {
		t.Fatal("no error for a missing file")
	}
}

// TestParseRejectsOutOfRangeIntegers: an integer beyond the outbox columns' int32 is a parse
// error naming the line, never clamped (a scope) nor dropped (a category).
func TestParseRejectsOutOfRangeIntegers(t *testing.T) {
	t.Parallel()
	base := "class OutboxCategory(IntEnum):\n    USER_UPDATE = %s\n\n\nclass OutboxScope(IntEnum):\n    USER_SCOPE = scope_categories(%s, {OutboxCategory.USER_UPDATE})\n    OTHER_SCOPE = %s\n"
	for name, c := range map[string]struct {
		cat, scope, plain string
		want              string
	}{
		"ScopeCall":  {"0", "99999999999999999999", "2", "x.py:6: USER_SCOPE = 99999999999999999999 is out of range: the outbox columns hold integers up to 2147483647"},
		"Category":   {"99999999999999999999", "1", "2", "x.py:2: USER_UPDATE = 99999999999999999999 is out of range: the outbox columns hold integers up to 2147483647"},
		"PlainScope": {"0", "1", "2147483648", "x.py:7: OTHER_SCOPE = 2147483648 is out of range: the outbox columns hold integers up to 2147483647"},
		"Long":       {"0", "1", strings.Repeat("9", 60), "x.py:7: OTHER_SCOPE = 999999999999999999999999… is out of range: the outbox columns hold integers up to 2147483647"},
		"MaxIsFine":  {"2147483647", "1", "2", ""},
	} {
		_, err := Parse("x.py", []byte(fmt.Sprintf(base, c.cat, c.scope, c.plain)))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

// TestRetiredEras: the registry marks retired categories with the era they retired in:
// 26 (ORGANIZATION_MEMBER_TEAM_UPDATE) in Aug 2026 as UNUSED_EIGHT, and it answers to both
// names; the UNUSED_ placeholders and the comment-retired ones by May 2026; a checkout's
// UNUSED_FIVE..SEVEN with what they replaced unverified; a live category none.
func TestRetiredEras(t *testing.T) {
	t.Parallel()
	r := Builtin()
	for name, want := range map[string]string{
		"ORGANIZATION_MEMBER_TEAM_UPDATE": "Aug 2026, as UNUSED_EIGHT",
		"UNUSED_EIGHT":                    "Aug 2026, as UNUSED_EIGHT",
		"UNUSED_ONE":                      "by May 2026",
		"UNUSUED_THREE":                   "by May 2026",
		"WEBHOOK_PROXY":                   "by May 2026",
	} {
		c, err := r.ResolveCategory(name)
		if err != nil || !c.Retired || !strings.HasPrefix(c.RetiredIn, want) {
			t.Errorf("%s: %+v (%v), want retired %q", name, c, err, want)
		}
	}
	if c, _ := r.ResolveCategory("UNUSED_EIGHT"); c.Value != 26 {
		t.Errorf("UNUSED_EIGHT = %d, want 26", c.Value)
	}
	if c, _ := r.ResolveCategory("TEAM_UPDATE"); c.Retired || c.RetiredIn != "" {
		t.Errorf("TEAM_UPDATE is live (its rows still written): %+v", c)
	}
	src := BuiltinSource()
	src.Origin = "current"
	for i, c := range src.Categories {
		if c.Value == 26 {
			src.Categories[i].Name = "UNUSED_EIGHT"
		}
	}
	src.Categories = append(src.Categories, CategoryDef{Name: "UNUSED_FIVE", Value: 49})
	for i, s := range src.Scopes {
		for j, n := range s.Categories {
			if n == "ORGANIZATION_MEMBER_TEAM_UPDATE" {
				src.Scopes[i].Categories[j] = "UNUSED_EIGHT"
			}
		}
		if s.Name == "USER_SCOPE" {
			src.Scopes[i].Categories = append(slices.Clone(s.Categories), "UNUSED_FIVE")
		}
	}
	cur, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cur.ResolveCategory("ORGANIZATION_MEMBER_TEAM_UPDATE"); err != nil || c.Value != 26 || !c.Retired {
		t.Errorf("a current checkout: the old name of 26: %+v (%v)", c, err)
	}
	if c, _ := cur.CategoryByValue(49); !c.Retired || !strings.Contains(c.RetiredIn, "UNVERIFIED") {
		t.Errorf("UNUSED_FIVE: %+v", c)
	}
}
