package cmd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// The kill/resume/restore loop (#36): each bulk repair (skip --category, compact, reschedule)
// and drain SELECTORS --parallel 4 --handler discard is SIGKILLed at a random point (once its
// archive, or its journal, has grown past a random size), or runs under a random file size
// limit (RLIMIT_FSIZE on the child: a full disk, landing in the row staging or in the marker
// writes); then the run is resumed (--resume; the drain: run again) and its archive restored
// (restore --all --include-skipped). The table must then be byte-identical to the seed under
// --keep-backoff, and otherwise hold every id with identical columns but the schedule. The
// seed is printed; OUTBOXCTL_KILL_SEED replays one.

// killLoopSeed seeds organization shards 1..12, each a coalesce group of three rows
// (ORGANIZATION_UPDATE, object 1) and one ORGANIZATION_MEMBER_UPDATE row, in backoff, with
// payloads of 2 KB so the archive's writes take a while.
func killLoopSeed(t *testing.T) string {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT 0, s, CASE WHEN i < 4 THEN 2 ELSE 3 END, CASE WHEN i < 4 THEN 1 ELSE i END,
		       jsonb_build_object('s', s, 'i', i, 'pad', repeat('x', 2000)), now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, 12) s, generate_series(1, 4) i ORDER BY s, i`, pgx.Identifier{schema}.Sanitize())); err != nil {
		t.Fatal(err)
	}
	return schema
}

// tableWithoutSchedules is the table as tableJSON, every column but the schedule.
func tableWithoutSchedules(t *testing.T, schema string) string {
	t.Helper()
	var s string
	if err := testdb.Pool(t).QueryRow(context.Background(), fmt.Sprintf(`SELECT coalesce(json_agg(json_build_object('id', r.id, 'scope', r.shard_scope,
		'shard', r.shard_identifier, 'category', r.category, 'object', r.object_identifier, 'payload', r.payload::text, 'added', r.date_added) ORDER BY r.id)::text, '')
		FROM %s.sentry_regionoutbox r`, pgx.Identifier{schema}.Sanitize())).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

func TestBulkKillResumeRestoreLoop(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("OUTBOXCTL_KILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (replay: OUTBOXCTL_KILL_SEED=%d go test ./cmd -run TestBulkKillResumeRestoreLoop)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	bin := outboxctlBin(t)
	type job struct {
		name    string
		args    []string
		archive bool // writes an archive (the kill watches it, restore reads it)
		drain   bool // no --resume: run again
		keep    bool // --keep-backoff: byte-identical after restore
	}
	jobs := []job{
		{"skip", []string{"skip", "--category", "ORGANIZATION_UPDATE", "--batch-shards", "1"}, true, false, false},
		{"skip keep-backoff", []string{"skip", "--category", "ORGANIZATION_UPDATE", "--batch-shards", "1", "--keep-backoff"}, true, false, true},
		{"compact", []string{"compact", "--scope", "organization", "--batch-shards", "2"}, true, false, false},
		{"compact keep-backoff", []string{"compact", "--scope", "organization", "--batch-shards", "2", "--keep-backoff"}, true, false, true},
		{"reschedule", []string{"reschedule", "--scope", "organization", "--batch-shards", "1"}, false, false, false},
		{"drain discard", []string{"drain", "--scope", "organization", "--parallel", "4", "--handler", "discard"}, true, true, false},
	}
	for _, j := range jobs {
		for _, fault := range []string{"kill", "full disk"} {
			if fault == "full disk" && !j.archive {
				continue // a reschedule writes only its journal
			}
			at := rng.Int64N(150_000) // bytes of archive (journal: lines) before the fault
			t.Run(j.name+", "+fault, func(t *testing.T) {
				state := t.TempDir()
				schema := killLoopSeed(t)
				before, beforeCols := tableJSON(t, schema), tableWithoutSchedules(t, schema)
				archive := filepath.Join(t.TempDir(), "a.jsonl")
				args := append(append([]string{}, j.args...), "--yes")
				if j.archive {
					args = append(args, "--archive", archive)
				}
				c := binCommand(bin, state, schema, args...)
				var out, errs syncBuffer
				c.Stdout, c.Stderr = &out, &errs
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan struct{})
				go func() { _ = c.Wait(); close(exited) }()
				journal := func() string {
					js, _ := filepath.Glob(filepath.Join(state, "outboxctl", "bulk-*.jsonl"))
					if len(js) != 1 {
						return ""
					}
					return js[0]
				}
				switch fault {
				case "full disk":
					limit := uint64(4096 + at)
					if err := unix.Prlimit(c.Process.Pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
						t.Fatal(err)
					}
					t.Logf("file size limit %d bytes", limit)
				case "kill":
					grown := func() bool {
						if j.archive {
							return fileSize(archive) > at
						}
						b, _ := os.ReadFile(journal())
						return int64(strings.Count(string(b), "\n")) > 1+at%12
					}
					waitFor(t, "the fault point", func() bool {
						select {
						case <-exited:
							return true
						default:
							return grown()
						}
					})
					_ = c.Process.Kill()
					t.Logf("killed at %d bytes of archive", fileSize(archive))
				}
				<-exited
				code := c.ProcessState.ExitCode()
				t.Logf("the run: exit %d\n%s", code, errs.String())

				// Resume what the run left (the drain: run it again), without the fault.
				if j.drain {
					binRun(t, bin, state, schema, 0, args...)
				} else if p := journal(); p != "" {
					id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "bulk-"), ".jsonl")
					resume := []string{j.args[0], "--resume", id, "--yes"}
					if _, errOut := binRun(t, bin, state, schema, 0, resume...); true {
						t.Logf("the resume:\n%s", errOut)
					}
				}
				if j.archive && fileSize(archive) > 0 {
					res, errOut := binRun(t, bin, state, schema, 0, "restore", archive, "--all", "--include-skipped", "--yes", "-o", "json")
					if !strings.Contains(res, `"left_out": []`) {
						t.Errorf("restore left rows out:\n%s\n%s", res, errOut)
					}
					defer func() {
						if t.Failed() { // the archive's lines but its rows' payloads, to tell what happened
							b, _ := os.ReadFile(archive)
							t.Logf("restore:\n%s\n%s\narchive:\n%s", res, errOut, regexp.MustCompile(`"payload(_text)?":("(\\.|[^"])*"|\{[^}]*\}),`).ReplaceAll(b, nil))
						}
					}()
				}
				switch {
				case !j.archive: // a reschedule changes schedules only
					if after := tableWithoutSchedules(t, schema); after != beforeCols {
						t.Errorf("after the resume, the table differs from the seed beyond schedules")
					}
				case j.keep:
					if after := tableJSON(t, schema); after != before {
						t.Errorf("after restore, the table is not byte-identical to the seed (--keep-backoff)")
					}
				default:
					if after := tableWithoutSchedules(t, schema); after != beforeCols {
						t.Errorf("after restore, the table differs from the seed beyond schedules:\n%s\nwant\n%s", after, beforeCols)
					}
				}
			})
		}
	}
}
