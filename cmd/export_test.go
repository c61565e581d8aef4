package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/outboxctl/outboxctl/internal/contract"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The output contract, checked on every run of the tests: each -o json document a command
// prints (in-process through render.Test's buffer, or in a script's subprocess) is validated
// against its command's JSON Schema as published in docs/schema (generated from the Go types
// by internal/contract). A violation fails the test binary (ContractTestingM) or, in a
// script's subprocess, the command (exit 97, the reason on stderr).

func init() {
	outputHook = func(r printedRun) {
		checkContract(r)
		recordSuggestions(r)
	}
}

var contracts = struct { //nolint:gochecknoglobals // the test binary's one record
	sync.Mutex
	compiled   map[string]*jsonschema.Schema
	validated  map[string]int
	violations []string
	failFast   bool
}{compiled: map[string]*jsonschema.Schema{}, validated: map[string]int{}}

type bytesOut interface{ Bytes() []byte }

func checkContract(r printedRun) {
	if r.format != "json" || r.printSQL || r.watch || r.selected {
		return
	}
	b, ok := r.out.(bytesOut)
	if !ok {
		return
	}
	err := validateOutput(r.command, r.fanOut, b.Bytes())
	contracts.Lock()
	defer contracts.Unlock()
	name := r.command
	if r.fanOut {
		name += " (over contexts)"
	}
	if err == nil {
		contracts.validated[name]++
		return
	}
	msg := fmt.Sprintf("outboxctl %s -o json: %v", name, err)
	if contracts.failFast {
		fmt.Fprintln(os.Stderr, "output contract: "+msg)
		os.Exit(97)
	}
	contracts.violations = append(contracts.violations, msg)
}

// validateOutput validates every JSON value of out (a buffer a test reused holds several)
// against the command's schema (its fan-out schema for a read over several contexts);
// nothing printed is nothing to check.
func validateOutput(command string, fanOut bool, out []byte) error {
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	sch, err := schemaOf(command, fanOut)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("not JSON: %w\n%s", err, out)
		}
		if err := sch.Validate(v); err != nil {
			return fmt.Errorf("%w\n%s", err, out)
		}
	}
}

func schemaOf(command string, fanOut bool) (*jsonschema.Schema, error) {
	contracts.Lock()
	defer contracts.Unlock()
	key := fmt.Sprintf("%s\x00%t", command, fanOut)
	if s, ok := contracts.compiled[key]; ok {
		return s, nil
	}
	var doc *contract.Document
	for _, d := range contract.Documents() {
		if d.Command == command {
			doc = &d
			break
		}
	}
	if doc == nil {
		return nil, fmt.Errorf("prints JSON, but internal/contract declares no document for %q", command)
	}
	// verify --context a,b names its two sides (a split deployment), not a fan-out: a
	// document not marked FanOut has the one form.
	file := doc.File()
	if fanOut && doc.FanOut {
		file = doc.FanOutFile()
	}
	text, err := os.ReadFile(filepath.Join(schemaDir(), file))
	if err != nil {
		return nil, fmt.Errorf("%w (go test ./internal/contract -run TestSchemasUpToDate -update)", err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	id := contract.SchemaID(file)
	if err := c.AddResource(id, parsed); err != nil {
		return nil, err
	}
	s, err := c.Compile(id)
	if err != nil {
		return nil, err
	}
	contracts.compiled[key] = s
	return s, nil
}

// SchemaDirEnv names docs/schema's absolute path for a script's subprocess, which runs in
// a work directory of its own: TestMain sets it, the scripts' Setup passes it on. Not this
// file's path from runtime.Caller: under -trimpath (CI's GOFLAGS, so a clean checkout reuses
// the build cache) that path is the import path's, not a directory.
const SchemaDirEnv = "OUTBOXCTL_TEST_SCHEMA_DIR"

// schemaDir is docs/schema: SchemaDirEnv's, else found from the working directory (go test
// runs a package's tests in its directory).
func schemaDir() string {
	if d := os.Getenv(SchemaDirEnv); d != "" {
		return d
	}
	d, _ := filepath.Abs(filepath.Join("..", "docs", "schema"))
	return d
}

// ContractTestingM runs the tests, then fails the binary on any output that broke its
// contract, and with -v lists the commands whose JSON was validated.
type ContractTestingM struct{ M interface{ Run() int } }

// Run runs the tests and reports the contract.
func (c ContractTestingM) Run() int {
	log, err := startSuggestionLog()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL suggestions: "+err.Error())
		return 1
	}
	code := c.M.Run()
	if code == 0 {
		code = checkSuggestions(log)
	}
	contracts.Lock()
	defer contracts.Unlock()
	for _, v := range contracts.violations {
		fmt.Fprintln(os.Stderr, "FAIL output contract: "+v)
	}
	if os.Getenv("OUTBOXCTL_CONTRACT_REPORT") != "" {
		var cmds []string
		for c, n := range contracts.validated {
			cmds = append(cmds, fmt.Sprintf("%s (%d)", c, n))
		}
		sort.Strings(cmds)
		fmt.Fprintln(os.Stderr, "output contract validated: "+strings.Join(cmds, ", "))
	}
	if len(contracts.violations) > 0 && code == 0 {
		return 1
	}
	return code
}

// teeBuffer is stdout for a script's subprocess: written through, and kept to validate.
type teeBuffer struct {
	w io.Writer
	b bytes.Buffer
}

func (t *teeBuffer) Write(p []byte) (int, error) { t.b.Write(p); return t.w.Write(p) }
func (t *teeBuffer) Bytes() []byte               { return t.b.Bytes() }

// MainForScript is the scripts' outboxctl: Main on the real streams, its stdout validated.
func MainForScript(args []string) int {
	contracts.failFast = true
	s := render.System()
	s.Out, s.Err = &teeBuffer{w: s.Out}, &teeBuffer{w: s.Err}
	return Main(context.Background(), args, s)
}
