package report

import (
	"fmt"
	"runtime/debug"
)

// Version is `version -o json`'s document: the release and the commit it was built from.
type Version struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// Stamps are what a binary's version line is made from: the -ldflags values (cmd's version,
// commit and date), which win over the module's build information.
type Stamps struct {
	Version, Commit, Date string
}

// Resolve is the version and commit to print: the -ldflags values, else the module's
// version and VCS revision, else "(devel)" and "unknown".
func (s Stamps) Resolve(buildInfo func() (*debug.BuildInfo, bool)) Version {
	v, c := s.Version, s.Commit
	if info, ok := buildInfo(); ok {
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
	return Version{Version: v, Commit: c}
}

// Line is the version line (also --version's), with the build date when one was stamped.
func (s Stamps) Line(buildInfo func() (*debug.BuildInfo, bool)) string {
	r := s.Resolve(buildInfo)
	if s.Date != "" {
		return fmt.Sprintf("outboxctl %s (commit %s, built %s)", r.Version, r.Commit, s.Date)
	}
	return fmt.Sprintf("outboxctl %s (commit %s)", r.Version, r.Commit)
}
