package exporter

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/promtest"
)

const deployDir = "../../deploy/prometheus"

// The shipped rules pass promtool check rules and their unit tests.
func TestAlertRulesPassPromtool(t *testing.T) {
	promtool := promtest.Need(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", "outboxctl.rules.yml"},
		{"test", "rules", "outboxctl.rules.test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = deployDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every outboxctl_ family the rules and the dashboard name is one the exporter serves, and
// every rule's runbook link points at a heading of docs/runbooks.md.
func TestRulesAndDashboardNameRealFamiliesAndRunbooks(t *testing.T) {
	known := map[string]bool{}
	for _, d := range allDescs {
		name := regexp.MustCompile(`fqName: "([a-z_]+)"`).FindStringSubmatch(d.String())
		if name == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		known[name[1]] = true
	}
	rules := read(t, filepath.Join(deployDir, "outboxctl.rules.yml"))
	dash := read(t, filepath.Join(deployDir, "outboxctl-dashboard.json"))
	var parsed map[string]any
	if err := json.Unmarshal([]byte(dash), &parsed); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	for file, text := range map[string]string{"rules": rules, "dashboard": dash} {
		names := regexp.MustCompile(`outboxctl_[a-z_]+`).FindAllString(text, -1)
		if len(names) == 0 {
			t.Errorf("%s names no family", file)
		}
		for _, n := range names {
			if !known[n] {
				t.Errorf("%s names %s, which the exporter does not serve", file, n)
			}
		}
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(read(t, "../../docs/runbooks.md"), "\n") {
		if strings.HasPrefix(line, "#") {
			anchors[githubAnchor(strings.TrimLeft(line, "# "))] = true
		}
	}
	links := regexp.MustCompile(`runbook_url: "[^"#]*docs/runbooks\.md#([^"]+)"`).FindAllStringSubmatch(rules, -1)
	if want := strings.Count(rules, "- alert:"); len(links) != want {
		t.Errorf("%d runbook links for %d alerts", len(links), want)
	}
	for _, l := range links {
		if !anchors[l[1]] {
			t.Errorf("runbook link #%s is no heading of docs/runbooks.md", l[1])
		}
	}
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
