package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/outboxctl/outboxctl/internal/db"
)

// TestRedactReadsTheRawText: a password holding @ / : ? # & or a space, unencoded, is hidden
// whole, wherever a parser would have cut it; a query value holding @ is no password.
func TestRedactReadsTheRawText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://postgres:p4ss@w0rdTAIL@127.0.0.1:5432/test":         "postgres://postgres:xxxxx@127.0.0.1:5432/test",
		"postgres://u:pa/ss?w#0rd@h:5432/db":                            "postgres://u:xxxxx@h:5432/db",
		"postgres://u:pa ss@h,h2:5433/db":                               "postgres://u:xxxxx@h,h2:5433/db",
		"postgres://u:pw@host/db?application_name=me@example.com":       "postgres://u:xxxxx@host/db?application_name=me@example.com",
		"postgres://u@h/db?password=ab&cdef&sslmode=disable":            "postgres://u@h/db?password=xxxxx&sslmode=disable",
		"postgres://u@h/db?sslpassword=k3y!&sslmode=verify-full":        "postgres://u@h/db?sslpassword=xxxxx&sslmode=verify-full",
		"host=h password=ab cdef@gh user=x":                             "host=h password=xxxxx user=x",
		`host=h password='it\'s s3cret' user=x`:                         "host=h password=xxxxx user=x",
		"redis://:p4ss@w0rd@r:6379/0":                                   "redis://:xxxxx@r:6379/0",
		"rediss://user:pa ss/w?x@r:6380/1":                              "rediss://user:xxxxx@r:6380/1",
		"postgres://sentry@db.internal:5432/sentry?sslmode=verify-full": "postgres://sentry@db.internal:5432/sentry?sslmode=verify-full",
	} {
		if got := db.RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactHidesEveryPiece: what pgx made of a password cut at its first @ (the host
// w0rdTAIL@127.0.0.1) is hidden by the secrets read from the raw DSN, as are the pieces
// cut at a / or ?; a piece shorter than 4 bytes, or ordinary words, stay.
func TestRedactHidesEveryPiece(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ dsn, text, want string }{
		{"postgres://postgres:p4ss@w0rdTAIL@127.0.0.1:5432/test",
			"cannot reach PostgreSQL at w0rdTAIL@127.0.0.1:5432: lookup w0rdTAIL@127.0.0.1: no such host",
			"cannot reach PostgreSQL at xxxxx@127.0.0.1:5432: lookup xxxxx@127.0.0.1: no such host"},
		{"postgres://u:sec/ret?word#tail@h/db",
			`invalid port "sec" in "ret?word#tail@h/db"`,
			`invalid port "sec" in "xxxxx@h/db"`},
		{"host=h password=ab cdef@gh user=x", `missing "=" after "cdef@gh"`, `missing "=" after "xxxxx"`},
		// Pieces of exactly minFragment (4) bytes: both halves of p4ss@w0rd, each alone.
		{"postgres://u:p4ss@w0rd@127.0.0.1:5432/test",
			"lookup w0rd@127.0.0.1: no such host; user u, password p4ss",
			"lookup xxxxx@127.0.0.1: no such host; user u, password xxxxx"},
		// A short password is hidden where it stands as a word, not inside others.
		{"postgres://u:us@h/db", "status us", "status xxxxx"},
	} {
		if got := db.Redact(tc.text, db.Secrets(tc.dsn)...); got != tc.want {
			t.Errorf("Redact(%q) with the secrets of %q = %q, want %q", tc.text, tc.dsn, got, tc.want)
		}
	}
}

// TestConnectRefusesAPasswordCutAtItsAt: the DSN of the issue says what to fix, exit 2,
// and no piece of the password.
func TestConnectRefusesAPasswordCutAtItsAt(t *testing.T) {
	t.Parallel()
	_, err := db.Connect(context.Background(), db.Config{DSN: "postgres://postgres:p4ss@w0rdTAIL@127.0.0.1:5432/test"})
	var dbErr *db.Error
	if !errors.As(err, &dbErr) || !dbErr.UsageError() {
		t.Fatalf("err = %#v, want a usage db.Error", err)
	}
	want := `the connection string's host "xxxxx@127.0.0.1" holds an @, so its password was cut at an unencoded @; ` +
		"percent-encode @ / : ? # and spaces in the password (@ is %40, / is %2F)"
	if err.Error() != want {
		t.Fatalf("err = %q\nwant  %q", err, want)
	}
}

// TestDescribeHidesTheTail: an audit line's database, from a DSN whose password pgx cut at
// its first @, names no piece of it.
func TestDescribeHidesTheTail(t *testing.T) {
	t.Parallel()
	if got, want := db.Describe("postgres://u:p4ss@w0rdTAIL@h:5432/db"), "u@xxxxx@h:5432/db"; got != want {
		t.Fatalf("Describe = %q, want %q", got, want)
	}
}

// TestRedactHandlerURLs: a handler URL keeps its first path segment and loses the others
// (a webhook's token), also where a message repeats them; a query value shorter than 4 bytes
// is hidden as a whole value only (on 99e59e3 the 1 of ?x=1 hid the 1 of 127.0.0.1, and the
// colon after the URL went with its query); beside a cut mark, what a cut through a secret
// left is hidden (on 99e59e3 hunter2hun, a prefix, printed).
func TestRedactHandlerURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, text, want string }{
		{"http://127.0.0.1:15410/h?x=1", "handler http://127.0.0.1:15410/h?x=1: dial tcp 127.0.0.1:15410: refused; x=1",
			"handler http://127.0.0.1:15410/h?x=xxxxx: dial tcp 127.0.0.1:15410: refused; x=xxxxx"},
		{"https://hooks.slack.com/services/T0ABC/B0DEF/XXsecretXX", "handler https://hooks.slack.com/services/T0ABC/B0DEF/XXsecretXX answered 404: no route /services/T0ABC/B0DEF/XXsecretXX",
			"handler https://hooks.slack.com/services/xxxxx/xxxxx/xxxxx answered 404: no route /services/xxxxx/xxxxx/xxxxx"},
		{"http://r/h?token=hunter2hunter2hunter2", "pad token=hunter2hun… and …ter2hunter2 end", "pad token=xxxxx… and …xxxxx end"},
		{"http://r/h?token=hunter2hunter2hunter2", "hun… and …ter not 4 bytes", "hun… and …ter not 4 bytes"},
	} {
		if got := db.Redact(tc.text, db.Secrets(tc.url)...); got != tc.want {
			t.Errorf("Redact(%q)\n= %q\nwant %q", tc.text, got, tc.want)
		}
	}
}
