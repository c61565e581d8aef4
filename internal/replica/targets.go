package replica

import (
	"os"
	"slices"
	"strings"

	"github.com/outboxctl/outboxctl/internal/refused"
)

// DriftClasses are the classes --drift takes.
var DriftClasses = []string{Missing, Stale, Orphan, Pending} //nolint:gochecknoglobals // constant list

// Request is what replicate is asked to write: PAIR ID... (Args), or the drifted objects of
// verify's JSON (From, with the Drift classes).
type Request struct {
	Args  []string
	From  string
	Drift []string
}

// Check checks PAIR ID... or --from, and --drift, before anything is read: it returns the
// objects of PAIR ID... (pair -> ids, each once), nil for --from (Read reads them). id parses
// an object id as the command line's ids are parsed, with its hint.
func (r Request) Check(id func(s, hint string) (int64, error)) (map[string][]int64, error) {
	const hint = "outboxctl replicate organization 42 --reason 'mapping missing after upgrade'"
	for _, c := range r.Drift {
		if !slices.Contains(DriftClasses, c) {
			return nil, refused.Errorf("outboxctl replicate --from drift.json --drift missing,stale", "invalid `--drift` %q: valid values are %s", c, strings.Join(DriftClasses, ", "))
		}
	}
	if r.From != "" {
		if len(r.Args) > 0 {
			return nil, refused.Errorf("outboxctl replicate --from drift.json", "`--from` takes the objects from the file: drop PAIR ID...")
		}
		return nil, nil
	}
	if len(r.Args) < 2 {
		return nil, refused.Errorf(hint, "name a pair and at least one id (or --from verify's JSON)")
	}
	p, err := Lookup(r.Args[0])
	if err != nil {
		return nil, refused.Errorf(hint, "%s", err.Error())
	}
	targets := map[string][]int64{}
	for _, s := range r.Args[1:] {
		n, err := id(s, hint)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(targets[p.Name], n) {
			targets[p.Name] = append(targets[p.Name], n)
		}
	}
	return targets, nil
}

// Read reads the objects of --from (FromFile), of the --drift classes (default
// missing,stale,orphan: pending objects are already queued); a file that does not read is
// the operator's to fix, with verify's JSON as the line to try.
func (r Request) Read() (map[string][]int64, error) {
	f, err := os.Open(r.From)
	if err != nil {
		return nil, refused.Errorf("outboxctl verify -o json", "reading `--from`: %s", err.Error())
	}
	defer f.Close()
	classes := r.Drift
	if len(classes) == 0 {
		classes = []string{Missing, Stale, Orphan}
	}
	targets, err := FromFile(f, classes)
	if err != nil {
		return nil, refused.Errorf("outboxctl verify -o json", "`--from` %s: %s", r.From, err.Error())
	}
	return targets, nil
}
