package cmd

import (
	"context"
	"errors"
	"go/ast"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestPrintErrorEscapesControlCharacters feeds printError what a hostile handler returns (a
// response body that retitles the terminal and erases lines) and a hint with a newline: the
// output must stay the promised lines, with every control character shown escaped.
func TestPrintErrorEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	io, _, errOut := render.Test()
	err := errors.New("handler returned 500: \x1b]0;pwned\x07oops\x1b[2K\r\n\tdetail\u2028\x9b")
	printError(context.Background(), io, err, "")
	want := "Error: handler returned 500: \\x1b]0;pwned\\x07oops\\x1b[2K detail \\x9b\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}

	io, _, errOut = render.Test()
	printError(context.Background(), io, usageErrorf("use --reason 'x'\n\x1b[1AError: forged", "bad \x1b[31mflag"), "outboxctl x")
	want = "Error: bad \\x1b[31mflag\nTry: use --reason 'x' \\x1b[1AError: forged\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

// TestExitCodesAreTyped: a runtime failure whose text happens to read like cobra's (a handler
// answering "invalid argument", a table called "unknown command") is a failure, exit 1; only
// typed usage errors exit 2. Cobra's own errors are typed where cobra returns them.
func TestExitCodesAreTyped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, msg := range []string{"invalid argument for handler", "handler: unknown command", "accepts 3 rows"} {
		if got := exitCode(ctx, errors.New(msg)); got != ExitError {
			t.Errorf("exitCode(%q) = %d, want %d", msg, got, ExitError)
		}
	}
	for _, args := range [][]string{
		{"nosuchcommand"}, {"shards", "--nope"}, {"shards", "--fail-if-depth", "x"},
		{"completion", "bash", "extra"}, {"version", "extra"}, {"inspect", "shard", "a"},
	} {
		io, _, errOut := render.Test()
		if got := Main(ctx, args, io); got != ExitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, got, ExitUsage, errOut.String())
		}
	}
}

// TestExitNumbersOnlyInExitGo: commands say what an outcome means (cmd/errors.go) and
// cmd/exit.go alone turns a meaning into a number. A file of cmd/ naming an exit code
// constant, the table, or os.Exit would choose a number itself, as the 17 exitError{code: …}
// sites, fan-out's and --watch's comparisons of codes did.
func TestExitNumbersOnlyInExitGo(t *testing.T) {
	t.Parallel()
	_, files := cmdFiles(t)
	numbers := map[string]bool{"exitCodes": true}
	for _, d := range files["exit.go"].Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					numbers[n.Name] = true
				}
			}
		}
	}
	if !numbers["ExitUsage"] {
		t.Fatal("no exit code constants found in exit.go")
	}
	for name, f := range files {
		if name == "exit.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if numbers[n.Name] && n.Obj == nil {
					t.Errorf("cmd/%s names the exit code %s: return an error of cmd/errors.go's vocabulary", name, n.Name)
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "os" && n.Sel.Name == "Exit" {
					t.Errorf("cmd/%s calls os.Exit: Main returns exitCode's number", name)
				}
			}
			return true
		})
	}
	// The vocabulary carries no number at all.
	for i, typ := 0, reflect.TypeOf(cmdError{}); i < typ.NumField(); i++ {
		if k := typ.Field(i).Type.Kind(); k >= reflect.Int && k <= reflect.Uint64 && typ.Field(i).Type != reflect.TypeOf(meaning(0)) {
			t.Errorf("cmdError.%s is a number: an error says what it means", typ.Field(i).Name)
		}
	}
}

// TestEveryMeaningHasItsDocumentedCode pins the one table against docs/exit-codes.md: each
// meaning exits with the code documented for it, and each documented code has a meaning.
func TestEveryMeaningHasItsDocumentedCode(t *testing.T) {
	t.Parallel()
	want := map[meaning]int{
		meansOK: 0, meansRuntime: 1, meansUsage: 2, meansDeclined: 2, meansThreshold: 3, meansWarning: 4,
		meansCritical: 5, meansPartial: 6, meansPending: 8, meansInterrupted: 130, meansDrift: 9, meansReadOnly: 10, meansNoRoom: 7,
	}
	for m := meansOK; m <= meansReadOnly; m++ {
		if got, ok := exitCodes[m]; !ok || got != want[m] {
			t.Errorf("meaning %d exits %d (mapped: %v), want %d", m, got, ok, want[m])
		}
	}
	if len(exitCodes) != len(want) {
		t.Errorf("exitCodes maps %d meanings, want %d", len(exitCodes), len(want))
	}
	b, err := os.ReadFile("../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[int]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Split(l, "|"); len(f) > 2 {
			if n, err := strconv.Atoi(strings.TrimSpace(f[1])); err == nil {
				documented[n] = true
			}
		}
	}
	mapped := map[int]bool{}
	for _, code := range exitCodes {
		mapped[code] = true
		if !documented[code] {
			t.Errorf("exit %d is not in docs/exit-codes.md", code)
		}
	}
	for code := range documented {
		if !mapped[code] {
			t.Errorf("docs/exit-codes.md documents exit %d, which no meaning maps to", code)
		}
	}
}

// TestMeaningsOutrankTheInterrupt: after a signal, a usage or plain error is the
// interrupt's doing (130, "Error: interrupted"), while a command's own account keeps its
// meaning and its words (drain's "interrupted after 3 delivered message(s)", a declined
// prompt, a verdict), and a silent outcome prints nothing.
func TestMeaningsOutrankTheInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		err    error
		code   int
		stderr string
	}{
		{errors.New("read tcp: use of closed network connection"), 130, "Error: interrupted\n"},
		{usageErrorf("outboxctl shards", "bad"), 130, "Error: interrupted\n"},
		{interruptedf("interrupted after %d delivered message(s)", 3), 130, "Error: interrupted after 3 delivered message(s)\n"},
		{declined(), 2, "Error: cancelled: nothing was changed\n"},
		{exitcode.Verdictf(exitcode.Pending, "1 of 2 table(s) not complete"), 8, "Error: 1 of 2 table(s) not complete\n"},
		{silent(meansPartial), 6, ""},
	} {
		io, _, errOut := render.Test()
		printError(ctx, io, tt.err, "outboxctl shards")
		if got := exitCode(ctx, tt.err); got != tt.code || errOut.String() != tt.stderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tt.err, got, errOut.String(), tt.code, tt.stderr)
		}
	}
}
