package cmd_test

import (
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
)

// TestPrometheusURLIsAContextSetting: context show lists a context's prometheus-url with
// its line and its password hidden; top's --history below a minute is a usage error.
func TestPrometheusURLIsAContextSetting(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, 0o600, "contexts:\n  us:\n    dsn: postgres://postgres@127.0.0.1:1/x\n    prometheus-url: https://ops:s3cretPW@prom.internal:9090/prom\n")
	code, out, errOut := runConfig(config, []string{"--context", "us", "context", "show"})
	if code != 0 || strings.Contains(out+errOut, "s3cretPW") || !strings.Contains(out, "prometheus-url") || !strings.Contains(out, "prom.internal:9090") {
		t.Fatalf("context show: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runConfig(config, []string{"--context", "us", "top", "--once", "--history", "30s"})
	if code != cmd.ExitUsage || !strings.Contains(errOut, "`--history` must be at least 1m") {
		t.Fatalf("top --history 30s: exit %d\n%s", code, errOut)
	}
}
