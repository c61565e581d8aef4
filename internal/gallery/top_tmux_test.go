package gallery_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/outboxctl/outboxctl/internal/sentrysim"
	"github.com/outboxctl/outboxctl/internal/testdb"
	"github.com/outboxctl/outboxctl/internal/testtmux"
)

// The gallery played inside top (issue #42): the same shapes, seeded and replayed with
// Sentry's workers as above, but the operator works in `outboxctl top` on a real terminal
// (tmux) instead of running doctor and its printed commands: the finding's cause is seen,
// enter drills down to its card and its shards (a shard, a message), its action key opens
// the CLI's plan, y and enter confirm
// it, Sentry's workers have their go, and the finding goes from the screen. The shape's own
// checks then assert that no healthy message was lost and only the poison was archived.
// Every wait is on what the screen shows (testtmux), never on time.

var (
	topBinOnce sync.Once
	topBinDir  string
	topBinErr  error
)

// topBinary builds outboxctl once for this package's terminal tests (the gallery's other
// tests run it in process; top on a terminal needs a process).
func topBinary(t *testing.T) string {
	t.Helper()
	topBinOnce.Do(func() {
		if topBinDir, topBinErr = os.MkdirTemp("", "outboxctl-gallery-bin"); topBinErr != nil {
			return
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(topBinDir, "outboxctl"), "../..").CombinedOutput(); err != nil {
			topBinErr = fmt.Errorf("building outboxctl: %v\n%s", err, out)
		}
	})
	if topBinErr != nil {
		t.Fatal(topBinErr)
	}
	return topBinDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if topBinDir != "" {
		_ = os.RemoveAll(topBinDir)
	}
	os.Exit(code)
}

// openTop starts top on the incident's schema in a 120×40 terminal, reading the listing and
// the findings every second (an operator's live screen), with the incident's state
// directory (the archives a skip writes, which check reads).
func (in *incident) openTop() *testtmux.Session {
	in.t.Helper()
	bin := topBinary(in.t)
	s := testtmux.Shell(in.t, 120, 40, "NO_COLOR=1", "PATH="+bin+":"+os.Getenv("PATH"), "XDG_STATE_HOME="+in.state)
	s.Command(fmt.Sprintf("outboxctl --dsn '%s' --schema %s top --interval 1s --findings-interval 1s; echo rc=$?", testdb.DSN(), in.schema))
	return s
}

// confirm answers the plan on the screen (Proceed? [y/N]) with y and enter, and waits for
// the command's exit 0.
func confirm(t *testing.T, s *testtmux.Session, plan *regexp.Regexp) string {
	t.Helper()
	s.Wait(plan)
	s.Keys("y")
	s.Wait(regexp.MustCompile(`answer: y█`))
	s.Keys("Enter")
	screen := s.Wait(regexp.MustCompile(`\(exit \d+; esc goes back`))
	if !strings.Contains(screen, "(exit 0; esc goes back") {
		t.Fatalf("the action did not exit 0:\n%s", screen)
	}
	return screen
}

// skipShort skips a real-terminal journey under -short (make test/race), as testtmux does,
// before its shape is seeded and replayed.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a real-terminal test: make test runs it (-short skips it, as testtmux does)")
	}
}

// quit leaves top with q and checks its exit 0.
func quit(t *testing.T, s *testtmux.Session) {
	t.Helper()
	s.Keys("q")
	if screen := s.WaitDone(); !regexp.MustCompile(`(?m)^rc=0$`).MatchString(screen) {
		t.Fatalf("top did not exit 0:\n%s", screen)
	}
}

// An outage that is over (TestGalleryOutageOver's shape) played in top: the receiver_outage
// finding, the shards it names and one of them, R: the reschedule it printed, confirmed; Sentry's workers deliver
// and the findings pane says all is ok; nothing healthy lost, nothing archived.
func TestGalleryInTopOutageOver(t *testing.T) {
	skipShort(t)
	in := newIncident(t, "sentry_regionoutbox")
	in.seedOutageOver()

	s := in.openTop()
	s.Wait(regexp.MustCompile(`(?m)^> \w+ +receiver_outage .*40`))
	s.Keys("Enter") // drill down: the finding, its printed commands, the shards it names
	s.Wait(regexp.MustCompile(`(?s)receiver_outage · stuck · 40 shards.*next: outboxctl .*reschedule --stuck --at-cap.*its shards that doctor names, 35 more left out`))
	s.Keys("Enter") // one of them: inspect shard's card and its messages
	s.Wait(regexp.MustCompile(`Messages \(the head, then the newest\)`))
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`its shards that doctor names`))
	s.Keys("R")
	confirm(t, s, regexp.MustCompile(`(?s)\$ outboxctl .*reschedule .*40 shard\(s\) holding.*Proceed\? \[y/N\]`))
	in.workers() // Sentry's workers deliver the shards made due
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`this finding is gone from the last refresh`))
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`no findings: \d+ check results, all ok`))
	quit(t, s)
	in.check()
}

// One poison message among the shards of an outage (TestGalleryPoisonAmongAnOutage's shape)
// played in top: R on the outage, confirmed; Sentry's workers deliver all but the poison
// head, which fails again while its category delivers elsewhere; top then shows the poison
// finding, enter drills down to its shard and the poison's payload, S runs its printed
// skip, confirmed; the findings pane
// says all is ok, only the poison's group was archived and nothing healthy was lost.
func TestGalleryInTopPoisonAmongAnOutage(t *testing.T) {
	skipShort(t)
	in := newIncident(t, "sentry_regionoutbox")
	in.seedPoisonAmongAnOutage()

	s := in.openTop()
	s.Wait(regexp.MustCompile(`(?m)^> \w+ +receiver_outage `))
	s.Keys("Enter")
	s.Wait(regexp.MustCompile(`(?s)receiver_outage · stuck · .*next: outboxctl .*reschedule --stuck --at-cap`))
	s.Keys("R")
	confirm(t, s, regexp.MustCompile(`(?s)\$ outboxctl .*reschedule .*Proceed\? \[y/N\]`))
	in.workers() // the outage's shards deliver; the poison head fails again
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`this finding is gone from the last refresh`))
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`(?m)^> \w+ +poison `))
	s.Keys("Enter") // the finding: its cause, its skip of exactly the poison's group, its shard
	s.Wait(regexp.MustCompile(`(?s)poison · stuck · ORGANIZATION_SCOPE/4 .*next: outboxctl .*skip \d+ --reason 'poison.*its shards \(enter inspects one\)`))
	s.Keys("Enter") // the shard, then the poison head's payload
	s.Wait(regexp.MustCompile(`Messages \(the head, then the newest\)`))
	s.Keys("Enter")
	s.Wait(regexp.MustCompile(`(?s)payload \(secrets redacted\):.*bad slug`))
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`Messages \(the head, then the newest\)`))
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`its shards \(enter inspects one\)`))
	s.Keys("S")
	confirm(t, s, regexp.MustCompile(`(?s)\$ outboxctl .*skip .*Proceed\? \[y/N\]`))
	in.workers() // the shard delivers what waited behind the poison
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`this finding is gone from the last refresh`))
	s.Keys("Escape")
	s.Wait(regexp.MustCompile(`no findings: \d+ check results, all ok`))
	quit(t, s)
	in.check(sentrysim.GroupKey{Shard: sentrysim.Shard{Scope: 0, ID: 4}, Category: authProvider, Object: 4})
}
