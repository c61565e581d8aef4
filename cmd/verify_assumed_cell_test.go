package cmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestSplitVerifyAssumedCell: a split verify whose cell context has no cell: setting takes
// the context's name as the cell. When no organization mapping of the control silo names
// that cell (every object would read missing, each with a replicate next line: issue 36 item
// 9) it refuses, exit 2, naming the cells the mappings do name and a command with --cell;
// when they name it, it runs and says which cell it assumed; --cell is taken as given,
// without a word (a cell context cannot carry a cell: setting: it needs silo: control).
func TestSplitVerifyAssumedCell(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 20, Members: 40, Cell: "us"}
	cellSchema, controlSchema := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, cellSchema, controlSchema, shape)
	config := writeConfig(t, 0o600, fmt.Sprintf("contexts:\n  eu1:\n    dsn: %[1]s\n    schema: %[2]s\n  us:\n    dsn: %[1]s\n    schema: %[2]s\n  control:\n    dsn: %[1]s\n    schema: %[3]s\n",
		testdb.DSN(), cellSchema, controlSchema))
	code, out, errOut := runConfig(config, []string{"--context", "eu1,control", "verify", "organization", "-o", "json"})
	if code != cmd.ExitUsage || out != "" ||
		!strings.Contains(errOut, "verify: the cell context eu1 has no cell: setting, and no organization mapping in the control silo names a cell \"eu1\" (they name us)") ||
		!strings.Contains(errOut, "Try: outboxctl --context eu1,control --cell us verify") {
		t.Fatalf("eu1: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = runConfig(config, []string{"--context", "us,control", "verify", "organization", "-o", "json"})
	if code != 0 || !strings.Contains(errOut, `cell "us" assumed: the context us has no cell: setting; the control silo's organization mappings name it`) || !strings.Contains(out, `"pair": "organization"`) {
		t.Fatalf("us: exit %d\nstderr %s", code, errOut)
	}
	for _, args := range [][]string{{"--context", "eu1,control", "--cell", "us"}} {
		code, _, errOut = runConfig(config, append(args, "verify", "organization", "-o", "json"))
		if code != 0 || strings.Contains(errOut, "assumed") {
			t.Fatalf("%v: exit %d\nstderr %s", args, code, errOut)
		}
	}
}
