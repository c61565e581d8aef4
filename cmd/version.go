package cmd

import (
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// version, commit and date are set at build time (the Makefile, .goreleaser.yaml):
//
//	go build -ldflags "-X github.com/outboxctl/outboxctl/cmd.version=v0.1.0 -X github.com/outboxctl/outboxctl/cmd.commit=abc123 -X github.com/outboxctl/outboxctl/cmd.date=2026-12-01T00:00:00Z"
//
// Without them (go install, go run) version and commit fall back to the module's build
// information, and no build date is printed.
var (
	version = "" //nolint:gochecknoglobals // set by -ldflags
	commit  = "" //nolint:gochecknoglobals // set by -ldflags
	date    = "" //nolint:gochecknoglobals // set by -ldflags
)

// versionOptions are what version prints from: the -ldflags values, which win over the
// module's build information (report.Stamps).
type versionOptions struct {
	Version, Commit, Date string
}

// Validate has nothing to check: version takes no flags, and exactArgs refuses arguments.
func (o versionOptions) Validate() error { return nil }

// versionString is this binary's version line (also --version's).
func versionString() string {
	return report.Stamps{Version: version, Commit: commit, Date: date}.Line(debug.ReadBuildInfo)
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print outboxctl's version and commit",
		Args:  exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			o := versionOptions{Version: version, Commit: commit, Date: date}
			if err := o.Validate(); err != nil {
				return err
			}
			return runVersion(a.factory(), o)
		},
	}
}

// runVersion prints the version line, or with -o a document of version and commit (-o json:
// {"version": …, "commit": …}).
func runVersion(d factory, o versionOptions) error {
	if !d.format.lines {
		return d.printer.Print(render.Doc{{Name: "version", Card: render.FieldsOf(report.Stamps(o).Resolve(d.buildInfo))}})
	}
	return d.printer.Linef("%s", report.Stamps(o).Line(d.buildInfo))
}
