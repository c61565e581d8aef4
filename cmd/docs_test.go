package cmd

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/render"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/reference from the command tree")

// TestReferenceDocsUpToDate keeps docs/reference/*.md equal to what the command tree says
// (usage, every flag, examples), so the docs cannot drift from the code. After changing a
// command: go test ./cmd -run TestReferenceDocs -update-docs (or make docs).
func TestReferenceDocsUpToDate(t *testing.T) {
	io, _, _ := render.Test()
	root := newRootCmd(&app{io: io, getenv: func(string) string { return "" }})
	root.InitDefaultCompletionCmd()
	dir := filepath.Join("..", "docs", "reference")
	want := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		want[name] = referencePage(c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if *updateDocs {
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range want {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for name, text := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != text {
			t.Errorf("docs/reference/%s is out of date: run `make docs`", name)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("docs/reference/%s documents no command: run `make docs`", e.Name())
		}
	}
}

func referencePage(c *cobra.Command) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n%s.\n\n", c.CommandPath(), c.Short)
	if c.Long != "" {
		fmt.Fprintf(&b, "%s\n\n", c.Long)
	}
	fmt.Fprintf(&b, "## Usage\n\n```\n%s\n```\n\n", c.UseLine())
	if c.Example != "" {
		lines := strings.Split(c.Example, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "  ")
		}
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.Join(lines, "\n"))
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(&b, "## Flags\n\n```\n%s```\n\n", c.LocalNonPersistentFlags().FlagUsages())
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "## Global flags\n\n```\n%s```\n\n", c.InheritedFlags().FlagUsages())
	}
	if subs := c.Commands(); len(subs) > 0 {
		b.WriteString("## Subcommands\n\n")
		for _, s := range subs {
			if s.Hidden || s.Name() == "help" {
				continue
			}
			fmt.Fprintf(&b, "- [%s](%s.md): %s\n", s.CommandPath(), strings.ReplaceAll(s.CommandPath(), " ", "_"), s.Short)
		}
		b.WriteString("\n")
	}
	b.WriteString("See also: [exit codes](../exit-codes.md), [all commands](../README.md).\n")
	return b.String()
}
