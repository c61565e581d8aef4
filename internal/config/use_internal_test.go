package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentEditsLoseNone runs 400 edits of one config at once: 300 `context use` (each
// from its own Load, made before any edit starts, as 300 processes would) and 100 editors that add a context under the
// lock Use takes (as a second outboxctl writer would). Every added context must survive and
// current-context must be one the uses set: on main, a use wrote back the file as it was at
// its Load, so the contexts added meanwhile were lost.
func TestConcurrentEditsLoseNone(t *testing.T) {
	t.Parallel()
	const uses, adds = 300, 100
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("current-context: a\ncontexts:\n  a: {}\n  b: {}\n  c: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{EnvConfig: path}[k] }
	// Every use loads the file first, then all edits start together: a process reads the
	// config at its start, and its edit comes later.
	var loaded, wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, uses+adds)
	for i := range uses + adds {
		wg.Add(1)
		loaded.Add(1)
		go func() {
			defer wg.Done()
			if i < adds {
				loaded.Done()
				<-start
				errs <- addContext(path, fmt.Sprintf("added%d", i))
				return
			}
			f, err := Load(getenv)
			loaded.Done()
			<-start
			if err == nil {
				err = f.Use(string(rune('a' + i%3)))
			}
			errs <- err
		}()
	}
	loaded.Wait()
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for i := range adds {
		if _, err := f.Context(fmt.Sprintf("added%d", i)); err != nil {
			lost = append(lost, fmt.Sprintf("added%d", i))
		}
	}
	if len(lost) > 0 || !strings.Contains("abc", f.Current) || len(f.Names()) != adds+3 {
		t.Fatalf("%d of %d added contexts lost (%v); current-context %q; %d contexts", len(lost), adds, lost, f.Current, len(f.Names()))
	}
}

// addContext adds an empty context at the end of the file (whose last key is contexts), as
// an editor that takes the config's lock does: read, change, replace, all under the lock.
func addContext(path, name string) error {
	unlock, err := lock(lockPath(path))
	if err != nil {
		return err
	}
	defer unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return writeAtomic(path, append(data, "  "+name+": {}\n"...), 0o600)
}
