package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Every suggestion the suite sees printed is run. Each run of Main in the tests (in process,
// and in the scripts' subprocesses) appends the command lines its output offers (Try: lines,
// a JSON document's next and undo commands, the next cells of tab-separated output) to one
// file per test binary run, named by SuggestionLogEnv; once every test passed,
// checkSuggestions runs each distinct line as printed against a demo schema of its own: a
// read as printed, a mutation with --dry-run added. None may be a usage error (exit 2).

// SuggestionLogEnv names the file the suggestions are collected in (set by the test binary
// for itself and its scripts' subprocesses).
const SuggestionLogEnv = "OUTBOXCTL_TEST_SUGGESTIONS"

var suggestionLog = struct { //nolint:gochecknoglobals // the test binary's one record
	sync.Mutex
	off bool // checkSuggestions' own runs are not collected
}{}

// startSuggestionLog creates the binary's file (a subprocess finds it in its environment).
func startSuggestionLog() (string, error) {
	f, err := os.CreateTemp("", "outboxctl-suggestions-*.txt")
	if err != nil {
		return "", err
	}
	_ = f.Close()
	return f.Name(), os.Setenv(SuggestionLogEnv, f.Name())
}

func recordSuggestions(r printedRun) {
	path := os.Getenv(SuggestionLogEnv)
	out, okOut := r.out.(bytesOut)
	errOut, okErr := r.errOut.(bytesOut)
	if path == "" || !okOut || !okErr {
		return
	}
	lines := Suggestions(string(out.Bytes()), string(errOut.Bytes()))
	suggestionLog.Lock()
	defer suggestionLog.Unlock()
	if len(lines) == 0 || suggestionLog.off {
		return
	}
	// One write of whole lines with O_APPEND: the scripts' processes append to it too.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(strings.Join(lines, "\n") + "\n")
}

var jsonCommand = regexp.MustCompile(`"(outboxctl (?:[^"\\]|\\.)*)"`)

// Suggestions are the command lines an output offers: its Try: lines (and demo seed's
// "try:"), the "outboxctl …" strings of a JSON document (next, undo), and the cells of
// tab-separated output that are commands (a next cell's commands are joined by " ‖ ").
// A terminal's tables are left out: a cell there may be cut to fit.
func Suggestions(stdout, stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		for _, prefix := range []string{"Try: ", "try: "} {
			if i := strings.Index(l, prefix+"outboxctl "); i >= 0 {
				out = append(out, l[i+len(prefix):])
			}
		}
	}
	if t := strings.TrimSpace(stdout); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		for _, m := range jsonCommand.FindAllStringSubmatch(stdout, -1) {
			if s, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
				out = append(out, s)
			}
		}
		return out
	}
	return append(out, tabSeparatedCommands(stdout)...)
}

// tabSeparatedCommands are the commands of tab-separated output: a card's next and undo
// lines (key, tab, value) and the cells of a table's next and undo columns (found by its
// header), each cell's commands joined by " ‖ ".
func tabSeparatedCommands(stdout string) []string {
	var out []string
	var header []string
	for _, l := range strings.Split(stdout, "\n") {
		cells := strings.Split(l, "\t")
		switch {
		case len(cells) == 2 && (cells[0] == "next" || cells[0] == "undo"):
			out = append(out, strings.Split(cells[1], " ‖ ")...)
		case slices.Contains(cells, "next") || slices.Contains(cells, "undo"):
			header = cells
		case len(cells) == len(header):
			for i, name := range header {
				if (name == "next" || name == "undo") && cells[i] != "" {
					out = append(out, strings.Split(cells[i], " ‖ ")...)
				}
			}
		}
	}
	return slices.DeleteFunc(out, func(c string) bool { return !strings.HasPrefix(c, "outboxctl ") })
}

// ShellWords splits a command line the tool printed as a POSIX shell would (textsafe.Words).
func ShellWords(line string) ([]string, error) { return textsafe.Words(line) }

// retargeted is a printed command's arguments (after "outboxctl") pointed at schema: the
// words that named the printing test's own database, schema, context or enums file (gone
// once it ended) are dropped, and --watch with its interval (a watch runs until q).
func retargeted(words []string, schema string) []string {
	valued := map[string]bool{"--schema": true, "--context": true, "--enums": true, "--dsn": true, "--watch": false, "--all-contexts": false}
	out := []string{"--dsn", testdb.DSN(), "--connect-timeout", "2s", "--schema", schema}
	for i := 0; i < len(words); i++ {
		name, _, inline := strings.Cut(words[i], "=")
		takes, drop := valued[name]
		if !drop {
			out = append(out, words[i])
			continue
		}
		if name == "--watch" && !inline && i+1 < len(words) {
			if _, err := time.ParseDuration(words[i+1]); err == nil {
				i++
			}
		}
		if takes && !inline {
			i++
		}
	}
	return out
}

// commandOf is the command args name, found in the command tree as Main would parse them:
// its path, whether it changes the database (it takes --yes) and whether it has --dry-run.
func commandOf(args []string) (path string, mutates, dryRun bool) {
	io, _, _ := render.Test()
	root := newRootCmd(&app{io: io, getenv: io.Getenv})
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		return "", false, false
	}
	return c.CommandPath(), c.Flags().Lookup("yes") != nil, c.Flags().Lookup("dry-run") != nil
}

// checkSuggestions runs every distinct suggestion the suite printed; it returns the test
// binary's exit code (1 when one exits 2, or could not be run).
func checkSuggestions(path string) int {
	text, err := os.ReadFile(path)
	_ = os.Remove(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL suggestions: "+err.Error())
		return 1
	}
	var lines []string
	for _, l := range strings.Split(string(text), "\n") {
		if l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return 0
	}
	suggestionLog.Lock()
	suggestionLog.off = true
	suggestionLog.Unlock()
	start := time.Now()
	schema := testdb.NewSchemaName()
	state, err := os.MkdirTemp("", "outboxctl-suggestions-state-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL suggestions: "+err.Error())
		return 1
	}
	defer os.RemoveAll(state)
	run := func(args ...string) (int, string, string) {
		io, out, errOut := render.Test()
		io.Getenv = func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if servesForever(args) {
			// A server or a watch runs until stopped: what is checked is that the line
			// parses and validates (a usage error comes before any work), so it starts
			// already stopped and returns once it would begin.
			cancel()
		}
		return Main(ctx, args, io), out.String(), errOut.String()
	}
	if code, out, errOut := run("--dsn", testdb.DSN(), "--schema", schema, "demo", "seed", "--rows", "2000", "--shards", "200", "--yes"); code != 0 {
		fmt.Fprintf(os.Stderr, "FAIL suggestions: demo seed: exit %d\n%s%s", code, out, errOut)
		return 1
	}
	defer run("--dsn", testdb.DSN(), "--schema", schema, "demo", "drop", "--yes")
	failed := suggestionFailures(lines, schema, run)
	sort.Strings(failed)
	for _, f := range failed {
		fmt.Fprintln(os.Stderr, "FAIL suggestion: "+f)
	}
	if os.Getenv("OUTBOXCTL_SUGGESTION_REPORT") != "" {
		fmt.Fprintf(os.Stderr, "suggestions: %d distinct lines printed by the suite run, %d failed, checked in %s\n", len(lines), len(failed), time.Since(start).Round(time.Second))
	}
	if len(failed) > 0 {
		return 1
	}
	return 0
}

// suggestionFailures runs each line (distinct once retargeted) and says each that failed.
// servesForever says the command line runs until stopped: the exporter, a --watch.
func servesForever(args []string) bool {
	for _, a := range args {
		if a == "exporter" || a == "--watch" || strings.HasPrefix(a, "--watch=") {
			return true
		}
	}
	return false
}

func suggestionFailures(lines []string, schema string, run func(args ...string) (int, string, string)) []string {
	var failed []string
	seen := map[string]bool{}
	for _, line := range lines {
		words, err := ShellWords(line)
		if err != nil || len(words) == 0 || words[0] != "outboxctl" {
			failed = append(failed, fmt.Sprintf("%q is not one outboxctl command line: %v", line, err))
			continue
		}
		args := retargeted(words[1:], schema)
		path, mutates, dry := commandOf(args)
		switch {
		case strings.HasPrefix(path, "outboxctl context "):
			// The context commands read the printing test's config file, gone with it.
			continue
		case mutates && !dry:
			failed = append(failed, fmt.Sprintf("%q changes the database and has no --dry-run to run it safely", line))
			continue
		case mutates && !slices.Contains(args, "--dry-run"):
			args = append(args, "--dry-run")
		}
		key := strings.Join(args, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		if code, out, errOut := run(args...); code == exitCodes[meansUsage] {
			failed = append(failed, fmt.Sprintf("%q exits 2 (run as outboxctl %s):\n%s%s", line, strings.Join(args[2:], " "), out, bytes.TrimSpace([]byte(errOut))))
		}
	}
	return failed
}
