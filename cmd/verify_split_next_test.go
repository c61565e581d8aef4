package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// splitConfig is a config file of two contexts on the test server, us (the cell, cellSchema)
// and control (controlSchema), and a runner of outboxctl under it with nothing else in the
// environment (no $OUTBOXCTL_DSN: a line that names no context has no database).
func splitConfig(t *testing.T, cellSchema, controlSchema string) func(args ...string) (int, string, string) {
	t.Helper()
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  control:\n    dsn: %[1]s\n    schema: %[3]s\n",
		testdb.DSN(), cellSchema, controlSchema))
	return func(args ...string) (int, string, string) {
		t.Helper()
		io, out, errOut := render.Test()
		io.Getenv = func(k string) string { return map[string]string{"OUTBOXCTL_CONFIG": config}[k] }
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return cmd.Main(ctx, args, io), out.String(), errOut.String()
	}
}

// printedCommand is the command line of a next: the line itself, or the command a "wait:"
// line offers in its parentheses.
func printedCommand(t *testing.T, next string) string {
	t.Helper()
	if strings.HasPrefix(next, "wait: ") {
		i := strings.Index(next, "outboxctl ")
		if i < 0 || !strings.HasSuffix(next, ")") {
			t.Fatalf("a wait with no command: %q", next)
		}
		return next[i : len(next)-1]
	}
	return next
}

// runNextAsPrinted runs a split verify's next line as printed (a mutation with --dry-run):
// it must succeed, and act on wantSchema: a mutation's plan names it, an inspect reads the
// queued rows there.
func runNextAsPrinted(t *testing.T, run func(args ...string) (int, string, string), next, wantSchema string) {
	t.Helper()
	words := shellWords(t, printedCommand(t, next))
	if len(words) == 0 || words[0] != "outboxctl" {
		t.Fatalf("not an outboxctl command: %q", next)
	}
	args := words[1:]
	mutation := slices.Contains(args, "replicate") || slices.Contains(args, "reschedule")
	if mutation {
		args = append(args, "--dry-run")
	} else {
		args = append(args, "-o", "json")
	}
	code, out, errOut := run(args...)
	if code != 0 {
		t.Fatalf("%q: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", next, code, out, errOut)
	}
	if mutation {
		if !strings.Contains(errOut, "schema "+wantSchema) && !strings.Contains(errOut, wantSchema+".") {
			t.Fatalf("%q: the plan does not name schema %s:\n%s", next, wantSchema, errOut)
		}
		return
	}
	if !strings.Contains(out, `"id"`) {
		t.Fatalf("%q: no queued row read (schema %s):\n%s%s", next, wantSchema, out, errOut)
	}
}

// TestVerifySplitNextRuns: across two contexts, every next verify prints runs as printed:
// replicate names both contexts (it reads both silos), a pending cell -> control object's
// inspect shard or reschedule names the cell's context (which holds the region outbox), a
// pending control -> cell object's the control context's with --silo control and the cell.
// Each acts on the schema its context carries.
func TestVerifySplitNextRuns(t *testing.T) {
	t.Parallel()
	t.Run("cell to control", func(t *testing.T) {
		t.Parallel()
		cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
		testdb.SeedReplicas(t, cellSchema, controlSchema, testdb.ReplicaShape{Orgs: 60, Members: 150, Cell: "us"})
		checkSplitNexts(t, splitConfig(t, cellSchema, controlSchema), cellSchema, controlSchema, []string{"organization", "organizationmember"})
	})
	t.Run("control to cell", func(t *testing.T) {
		t.Parallel()
		cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
		testdb.SeedControlReplicas(t, controlSchema, cellSchema, testdb.ControlShape{Orgs: 30, N: 60, Cell: "us", OtherCell: "eu"})
		checkSplitNexts(t, splitConfig(t, cellSchema, controlSchema), cellSchema, controlSchema, controlPairs)
	})
}

// checkSplitNexts runs a split verify of pairs and every kind of next it prints, as printed.
func checkSplitNexts(t *testing.T, run func(args ...string) (int, string, string), cellSchema, controlSchema string, pairs []string) {
	t.Helper()
	code, out, errOut := run(append([]string{"--context", "us,control", "verify", "-o", "json", "--limit", "0"}, pairs...)...)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, errOut)
	}
	d := parseVerify(t, out)
	control := map[string]bool{}
	for _, p := range controlPairs {
		control[p] = true
	}
	seen := map[string]bool{}
	for _, g := range d.Drift {
		if strings.HasPrefix(g.Next, "no outbox repairs it") {
			continue
		}
		line := printedCommand(t, g.Next)
		words := shellWords(t, line)
		verb := ""
		for _, w := range []string{"replicate", "reschedule", "inspect"} {
			if slices.Contains(words, w) {
				verb = w
			}
		}
		var want, schema string
		switch {
		case verb == "replicate":
			want, schema = "outboxctl --context us,control replicate "+g.Pair+" "+fmt.Sprint(g.ObjectID), cellSchema
			if control[g.Pair] {
				schema = controlSchema
			}
		case control[g.Pair]:
			want, schema = "outboxctl --context control --silo control --cell us "+verb+" ", controlSchema
		default:
			want, schema = "outboxctl --context us "+verb+" ", cellSchema
		}
		if !strings.HasPrefix(line, want) {
			t.Fatalf("%s %d (%s): next %q, want it to start %q", g.Pair, g.ObjectID, g.Drift, g.Next, want)
		}
		// One of each kind of line per pair is run: they differ only in their ids.
		kind := g.Pair + " " + verb
		if seen[kind] {
			continue
		}
		seen[kind] = true
		runNextAsPrinted(t, run, g.Next, schema)
	}
	for _, p := range pairs {
		if !seen[p+" replicate"] || !seen[p+" reschedule"] && !seen[p+" inspect"] {
			t.Errorf("%s: the layout printed no replicate or no outbox next (%v)", p, seen)
		}
	}
}

// TestReplicateSplitPlanAndNext: a split replicate's plan names both contexts it reads and
// writes (each with its database and schema), not the invocation's default database; what
// it prints next (verify) names both contexts and, run as printed, shows the object pending
// in the cell's schema.
func TestReplicateSplitPlanAndNext(t *testing.T) {
	t.Parallel()
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, cellSchema, controlSchema, testdb.ReplicaShape{Orgs: 60, Members: 150, Cell: "us"})
	run := splitConfig(t, cellSchema, controlSchema)
	where := db.Describe(testdb.DSN())
	wantTarget := fmt.Sprintf("  - target: context us (the cell), database %s (from context us, line 3), schema %s; context control (the control silo), database %s (from context control, line 6), schema %s\n",
		where, cellSchema, where, controlSchema)
	// Organization 23 has no mapping (missing) and nothing queued.
	queued := len(cellOutbox(t, cellSchema, "id"))
	code, _, errOut := run("--context", "us,control", "replicate", "organization", "23", "--dry-run")
	if code != 0 || !strings.Contains(errOut, "Plan:\n"+wantTarget+"  - write 1 ORGANIZATION_UPDATE outbox row(s) into "+cellSchema+".sentry_regionoutbox") {
		t.Fatalf("--dry-run: exit %d, want the plan to start\n%s\ngot:\n%s", code, wantTarget, errOut)
	}
	if n := len(cellOutbox(t, cellSchema, "id")); n != queued {
		t.Fatalf("--dry-run wrote %d rows", n-queued)
	}
	code, out, errOut := run("--context", "us,control", "replicate", "organization", "23", "--yes", "-o", "json")
	if code != 0 || !strings.Contains(errOut, wantTarget) {
		t.Fatalf("replicate: exit %d, want the plan to name %s\n%s", code, wantTarget, errOut)
	}
	var written []struct{ Next string } // one document: its one table, an array
	if err := json.Unmarshal([]byte(out), &written); err != nil || len(written) != 1 {
		t.Fatalf("replicate -o json: %v\n%s", err, out)
	}
	next := written[0].Next
	if want := "outboxctl --context us,control verify organization --id 23"; next != want {
		t.Fatalf("next %q, want %q", next, want)
	}
	code, out, errOut = run(append(shellWords(t, next)[1:], "-o", "json")...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", next, code, errOut)
	}
	d := parseVerify(t, out)
	if len(d.Drift) != 1 || d.Drift[0].ObjectID != 23 || d.Drift[0].Drift != "pending" {
		t.Fatalf("%s: want organization 23 pending: %s", next, out)
	}
}
