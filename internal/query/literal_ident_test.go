package query

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestSimpleIdentIsThePattern: the loop accepts exactly what ^[a-z_][a-z0-9_]*$ accepts
// (the regexp it replaced), on chosen edges and on random strings over a small alphabet.
func TestSimpleIdentIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	cases := []string{"", "a", "_", "9", "a9", "9a", "_9", "A", "aB", "a-b", "a b", "a$", "é", "aé",
		"sentry_regionoutbox", "outboxctl_bench", "\x00", "a\n", "z_0", "{", "`", "/", ":"}
	alphabet := []rune("az_09AZ$- é`{/:\x00")
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		n := r.IntN(5)
		s := make([]rune, n)
		for i := range s {
			s[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(s))
	}
	for _, c := range cases {
		if got, want := simpleIdent(c), re.MatchString(c); got != want {
			t.Fatalf("simpleIdent(%q) = %v, the pattern says %v", c, got, want)
		}
	}
	if Ident("outboxctl_bench") != "outboxctl_bench" || Ident("Outbox") != `"Outbox"` || Ident("user") != `"user"` || Ident("a9") != "a9" || Ident("9a") != `"9a"` {
		t.Fatalf("Ident: %s %s %s %s %s", Ident("outboxctl_bench"), Ident("Outbox"), Ident("user"), Ident("a9"), Ident("9a"))
	}
}
