package cmd

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set at build time:
//
//	go build -ldflags "-X github.com/outboxctl/outboxctl/cmd.version=v0.1.0 -X github.com/outboxctl/outboxctl/cmd.commit=abc123"
//
// Without them (go install, go run) they fall back to the module's build information.
var (
	version = "" //nolint:gochecknoglobals // set by -ldflags
	commit  = "" //nolint:gochecknoglobals // set by -ldflags
)

func resolveVersion() (string, string) {
	v, c := version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && c == "" {
				c = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	}
	return v, c
}

func versionString() string {
	v, c := resolveVersion()
	return fmt.Sprintf("outboxctl %s (commit %s)", v, c)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print outboxctl's version and commit",
		Args:  exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(c.OutOrStdout(), versionString())
			return err
		},
	}
}
