package repair

import (
	"encoding/json"
	"errors"
	"os"
	"strings"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/refused"
	"github.com/outboxctl/outboxctl/internal/selector"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// A bulk run keeps a journal (drain.BulkJournal): its operation id, command, target,
// selector flags and selected shards, then the shards each batch finished. `--resume
// OPERATION` reads it and goes on with exactly the selected shards the run did not finish,
// with the run's archive, numbering and flags: what contradicts the run is refused here,
// before anything is read or written.

// Refused is a command line a repair refuses before it reads or writes anything: the
// operator's to fix (exit 2), Msg said and Try its Try: line ("" for none), refused.Error
// (internal/refused), which cmd says as its usage errors are said.
type Refused = refused.Error

func refusedf(try, format string, args ...any) error { return refused.Errorf(try, format, args...) }

// ReadResume reads and locks the journal of bulk run id (--resume id) for the run: an
// operation unknown here or a journal that does not read is refused (help: the command's
// --help, the Try), one another process holds is a failure (nothing was changed).
func ReadResume(id, help string) (*drain.BulkResume, error) {
	r, err := drain.ReadBulkJournal(id)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, refusedf(help, "no bulk operation %s here: --resume takes the operation id of a bulk run on this machine (its audit line's and summary's \"operation\")", textsafe.Clean(id))
	case errors.Is(err, drain.ErrJournalLocked):
		return nil, failuref("operation %s is running (or being resumed) in another process: its journal is locked; nothing was changed: resume it once that process has ended", textsafe.Clean(id))
	case err != nil:
		return nil, refusedf(help, "cannot resume %s: %v", textsafe.Clean(id), err)
	}
	return r, nil
}

// ResumeFlag is a boolean flag a bulk run recorded in its journal (--keep-backoff,
// --group-heads): a resume goes on with the run's value (recorded); one that gave the flag
// (given) with another value is refused, its Try this command line without the flag
// (without: "" when unknown, then command --resume OP), ran saying how the run went and
// what to do.
func ResumeFlag(without, command, op string, given, value, recorded bool, ran string) (bool, error) {
	if given && value != recorded {
		if without == "" {
			without = textsafe.Command(append(strings.Fields(command), "--resume", op)...)
		}
		return recorded, refusedf(without, "operation %s ran %s", op, ran)
	}
	return recorded, nil
}

// CheckResume checks a resumed run's flags against its journal: a skip or compact takes the
// run's --keep-backoff (adding the flag to a run without it is refused: its shards would end
// up with two policies), and --archive may name only the run's own file (a resume goes on
// writing there: its operations are numbered on from it, and restore --all of that file puts
// the whole run back). without is this command line without the flags in drop (true: takes a
// value), "" when unknown.
func (b *Bulk) CheckResume(without func(drop map[string]bool) string) error {
	r := b.Resume
	if r == nil {
		return nil
	}
	command := "outboxctl " + b.Command
	if b.Command != "reschedule" {
		var err error
		// Only adding the flag contradicts the run: without it a resume takes the run's.
		b.KeepBackoff, err = ResumeFlag(without(map[string]bool{"keep-backoff": false}), command, r.Op, b.KeepBackoff, b.KeepBackoff, r.KeepBackoff,
			"without --keep-backoff (its shards whose head row it removed were made due now): resume it without --keep-backoff")
		if err != nil {
			return err
		}
	}
	if b.Archive == "" || b.Archive == r.Archive {
		return nil
	}
	try := without(map[string]bool{"archive": true})
	if try == "" {
		try = textsafe.Command(append(strings.Fields(command), "--resume", r.Op)...)
	}
	return refusedf(try, "operation %s archives to %s, its own file: a resume goes on writing there, so it takes no other --archive (%s)",
		r.Op, textsafe.Clean(r.Archive), textsafe.Clean(b.Archive))
}

// CheckResumeTarget refuses to resume a run on another database or table than its own (this
// invocation's as the journal records it: Where and the table).
func (b *Bulk) CheckResumeTarget() error {
	r, target := b.Resume, b.Where+", "+b.Target.Describe()
	if r == nil || r.Target == target {
		return nil
	}
	// The Try names the run's own schema (the journal's), never this invocation's, which is
	// the wrong one when only the schema differs; a run on the default schema has no Try
	// (this invocation's --schema would be added to it).
	try := ""
	if r.Schema != "" {
		try = textsafe.Command(append(append([]string{"outboxctl", "--schema", r.Schema}, b.Command), "--resume", r.Op)...)
	}
	return refusedf(try, "operation %s changed %s, not %s: resume it with the run's --dsn (or --context) and --schema", r.Op, textsafe.Clean(r.Target), target)
}

// ResumeTries are the Try: lines of a resume its journal refuses: run with the run's own
// command (command: its name, "skip"), and this invocation without its selector flags.
type ResumeTries struct {
	Command   func(command, op string) string
	Selectors func(op string) string
}

// ResumeSelector is the selector of what journal r left for command ("outboxctl skip"): the
// run's unfinished shards (a skip's category and window as the run resolved them; resolve
// resolves the run's selector flags as the command line's are). A journal of another
// command, or selector flags other than the run's (given; none is fine), is refused with
// one line.
func ResumeSelector(r *drain.BulkResume, command string, given selector.Flags, tries ResumeTries, resolve func(selector.Flags) (query.ShardSelector, error)) (query.ShardSelector, error) {
	id := r.Op
	if want := "outboxctl " + r.Command; want != command {
		return query.ShardSelector{}, refusedf(tries.Command(r.Command, id), "operation %s is a %s run, not %s: resume it with %s --resume %s", id, r.Command, command, want, id)
	}
	var flags selector.Flags
	if err := json.Unmarshal(r.Flags, &flags); err != nil {
		return query.ShardSelector{}, failuref("cannot resume %s: its journal's flags: %v", id, err)
	}
	if (given.HasCriterion() || given.Limit > 0) && given != flags {
		return query.ShardSelector{}, refusedf(tries.Selectors(id), "operation %s selected its shards with %s, not %s: give the same selector flags, or none, with --resume",
			id, textsafe.Command(flags.Words()...), textsafe.Command(given.Words()...))
	}
	sel := query.ShardSelector{Listed: r.Remaining()}
	if r.Command == "skip" { // its rows: the category and the window as the run resolved them
		flags.ShardsFrom = ""
		full, err := resolve(flags)
		if err != nil {
			return sel, err
		}
		sel.Category, sel.AddedAfter, sel.AddedBefore = full.Category, r.AddedAfter, r.AddedBefore
	}
	return sel, nil
}
