package query

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query/session"
	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// parts are the statements of the SQL files that are pieces of another (a UNION ALL branch
// per outbox or table): PostgreSQL runs them inside their parent, whose region holds one as
// written, so the parent's test covers them.
var parts = map[string]string{ //nolint:gochecknoglobals // test table
	"doctor-lock-row":      "doctor-lock-waits",
	"head-group":           "doctor-capped-shards",
	"killswitch-outbox":    "killswitch-shards",
	"killswitch-no-outbox": "killswitch-shards",
	"backfill-table-bound": "backfill-table-bounds",
	// verify's and replicate's rows of a pair (their cell scopes name columns only some
	// pairs' tables have).
	"replica-part-source-rows":  "verify-pair",
	"replica-part-replica-rows": "verify-pair",
	"replica-part-join":         "verify-pair",
	// the forms of a pair's fields and their lists (sql/replica_parts.sql).
	"replica-part-column":    "verify-pair",
	"replica-part-flag":      "verify-pair",
	"replica-part-lines":     "verify-pair",
	"replica-part-cell":      "verify-pair",
	"replica-part-as":        "verify-pair",
	"replica-part-field":     "verify-pair",
	"replica-part-text":      "verify-pair",
	"replica-part-digest":    "verify-pair",
	"replica-part-no-fields": "verify-pair",
	"replica-part-differs":   "verify-pair",
	"replica-part-same":      "verify-pair",
}

// TestSQLFilesRunAsWritten prepares every statement of sql/*.sql and session.sql exactly as
// the file has it (every template at its default, every IF fragment kept, every EITHER at
// its first form: the markers are comments) against Sentry's tables, each @name a $n
// parameter whose type PostgreSQL infers: "readable and runnable by a DBA as it stands" is
// PostgreSQL's parser and planner saying so, not a promise. Preparing runs nothing.
func TestSQLFilesRunAsWritten(t *testing.T) {
	t.Parallel()
	schema := testdb.MailboxSchema(t, fixture.Options{Replicas: true}, fixture.MailboxIndexesCurrent)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := testdb.Pool(t).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // nothing to keep
	// The replicated tables the backfill, verify and replicate statements name as written
	// are the fixture's replicas.sql (Options.Replicas).
	for _, s := range []string{
		"SET LOCAL search_path = " + pgx.Identifier{schema}.Sanitize(),
		// The group action log outbox (the era model's statements read it): an outbox's shape.
		"CREATE TABLE sentry_groupactionlogoutbox (LIKE sentry_regionoutbox INCLUDING ALL)",
	} {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	query, err := sqlSet()
	if err != nil {
		t.Fatal(err)
	}
	sess, err := session.Files()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, set := range []*sqltemplate.Set{query, sess} {
		for _, name := range set.Names() {
			text, _ := set.Text(name)
			if _, ok := parts[name]; ok || strings.Contains(text, ":head_") {
				continue // a part, or a statement of the psql script (psql variables)
			}
			n++
			if set == sess {
				continue // run below, in order
			}
			if err := prepareAsWritten(ctx, tx, "outboxctl_as_written_"+strconv.Itoa(n), positional(text)); err != nil {
				t.Errorf("%s does not run as written: %v\n%s", name, err, text)
			}
		}
	}
	// The preamble runs: a savepoint opened, rolled back to and released, a setting, the
	// replica check. BEGIN, COMMIT and ROLLBACK are the test's own transaction's (pgx's).
	for _, name := range []string{"savepoint", "rollback-to-savepoint", "release-savepoint", "set-local", "primary-check", "idle-timeout-setting"} {
		text, _ := sess.Text(name)
		if _, err := tx.Exec(ctx, text); err != nil {
			t.Errorf("session %s does not run as written: %v\n%s", name, err, text)
		}
	}
	if n < 40 {
		t.Fatalf("only %d statements found", n)
	}
}

// prepareAsWritten prepares sql in a savepoint of its own, so one failure leaves the others
// theirs, and deallocates it.
func prepareAsWritten(ctx context.Context, tx pgx.Tx, name, sql string) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	defer sp.Rollback(ctx) //nolint:errcheck // nothing to keep
	if _, err := sp.Prepare(ctx, name, sql); err != nil {
		return err
	}
	return sp.Conn().Deallocate(ctx, name)
}

// positional replaces each @name of text by $n, the same n for the same name. A utility
// statement (ROLLBACK PREPARED of a doctor's next step) takes no parameter: a string literal
// stands in.
func positional(text string) string {
	var b strings.Builder
	index := map[string]int{}
	utility := !regexp.MustCompile(`^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b`).MatchString(text)
	for _, tok := range lex(text) {
		if tok.param == "" {
			b.WriteString(tok.text)
			continue
		}
		if utility {
			b.WriteString("'0'")
			continue
		}
		if _, ok := index[tok.param]; !ok {
			index[tok.param] = len(index) + 1
		}
		fmt.Fprintf(&b, "$%d", index[tok.param])
	}
	return b.String()
}
