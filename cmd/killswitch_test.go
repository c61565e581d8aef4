package cmd_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestKillswitchConcurrentWritersLoseNothing runs two writers at once, each adding its own
// ids one by one (and one of them removing some again), through the real command, and
// checks that the stored list holds exactly what both meant.
func TestKillswitchConcurrentWritersLoseNothing(t *testing.T) {
	t.Parallel()
	for _, valueType := range []fixture.PayloadType{fixture.PayloadJSONB, fixture.PayloadText} {
		t.Run(string(valueType), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{OptionValue: valueType})
			run := func(args ...string) {
				io, _, errOut := render.Test()
				base := []string{"--dsn", testdb.DSN(), "--schema", schema, "killswitch"}
				if code := cmd.Main(context.Background(), append(base, args...), io); code != 0 {
					t.Errorf("%v: exit %d: %s", args, code, errOut)
				}
			}
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 12 {
						id := fmt.Sprint(w*1000 + i)
						run("add", "organization", id, "--reason", "concurrency test", "--yes")
						if i%3 == 0 {
							run("remove", "organization", id, "--reason", "concurrency test", "--yes")
						}
					}
				}()
			}
			wg.Wait()
			var raw string
			err := testdb.Pool(t).QueryRow(context.Background(),
				"SELECT value::text FROM "+schema+".sentry_option WHERE key = $1", options.DisabledOrgShards).Scan(&raw)
			if err != nil {
				t.Fatal(err)
			}
			v, err := options.Decode(options.DisabledOrgShards, raw)
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := v.IDs()
			var want []int64
			for w := range 2 {
				for i := range 12 {
					if i%3 != 0 {
						want = append(want, int64(w*1000+i))
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("stored %v, want %v", got, want)
			}
		})
	}
}
