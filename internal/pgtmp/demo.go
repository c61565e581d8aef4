package pgtmp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DemoState is what demo up remembers of the cluster it started, so that demo down can
// remove it: in $XDG_STATE_HOME/outboxctl/demo-cluster.json (else ~/.local/state/...).
type DemoState struct {
	Dir    string `json:"dir"`
	DSN    string `json:"dsn"`
	BinDir string `json:"bin_dir"`
}

// DemoStatePath is the file demo up and down share.
func DemoStatePath(getenv func(string) string) (string, error) {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding a state directory for the demo cluster: %w; set XDG_STATE_HOME", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "outboxctl", "demo-cluster.json"), nil
}

// Up is demo up's answer.
type Up struct {
	DSN string
	// Source: FromUser or FromLocal (a server answers: nothing started), FromThrowaway (a
	// cluster runs for the demo).
	Source Source
	// Started is true when this call started the cluster; false when it was already up.
	Started bool
	Dir     string
	BinDir  string
}

// DemoUp returns a server for the demo: the DSN the user set, else the local server when it
// answers (and OUTBOXCTL_THROWAWAY is not 1), else the cluster an earlier demo up started if
// it still runs, else a new throwaway cluster that stays up until DemoDown, remembered in
// statePath. With no server binaries it fails with the line saying what to install.
func DemoUp(ctx context.Context, e Env, userDSN, statePath string) (Up, error) {
	if userDSN != "" {
		return Up{DSN: userDSN, Source: FromUser}, nil
	}
	if st, ok := readDemoState(statePath); ok {
		if e.Answers(st.DSN) {
			return Up{DSN: st.DSN, Source: FromThrowaway, Dir: st.Dir, BinDir: st.BinDir}, nil
		}
		// Remembered, but its server is gone (a restart): start afresh.
		_ = Remove(st.Dir)
		_ = os.Remove(statePath)
	}
	r := Resolve(e, "")
	switch r.Source {
	case FromLocal:
		return Up{DSN: r.DSN, Source: FromLocal}, nil
	case FromNone:
		if r.BinDir == "" && FindBinaries(e) == "" {
			return Up{}, errors.New(InstallHint(e, true))
		}
		return Up{}, errors.New(r.Install)
	}
	c, err := Start(ctx, Options{BinDir: r.BinDir, RunAs: r.RunAs, Keep: true, Autovacuum: true})
	if err != nil {
		return Up{}, err
	}
	st := DemoState{Dir: c.Dir, DSN: c.DSN, BinDir: r.BinDir}
	if err := writeDemoState(statePath, st); err != nil {
		_ = Remove(c.Dir)
		return Up{}, err
	}
	return Up{DSN: c.DSN, Source: FromThrowaway, Started: true, Dir: c.Dir, BinDir: r.BinDir}, nil
}

// DemoDown stops and removes the cluster demo up started; ok is false when none is
// remembered (nothing to do).
func DemoDown(statePath string) (st DemoState, ok bool, err error) {
	st, ok = readDemoState(statePath)
	if !ok {
		return st, false, nil
	}
	if err := Remove(st.Dir); err != nil {
		return st, true, fmt.Errorf("removing the demo cluster in %s: %w", st.Dir, err)
	}
	if err := os.Remove(statePath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, true, err
	}
	return st, true, nil
}

func readDemoState(path string) (DemoState, bool) {
	var st DemoState
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &st) != nil || st.Dir == "" {
		return DemoState{}, false
	}
	return st, true
}

func writeDemoState(path string, st DemoState) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
