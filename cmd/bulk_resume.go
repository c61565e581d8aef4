package cmd

import (
	"errors"
	"strings"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/selector"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// A bulk run keeps a journal (drain.BulkJournal): its operation id, command, target, selector
// flags and selected shards, then the shards each batch finished. `--resume OPERATION` reads
// it and works on exactly the selected shards the run did not finish, with the run's archive
// and numbering, where running the same command again selects afresh (what is done no longer
// matches --stuck, but does match --scope).

// resumeSelector reads the journal of --resume ID for command and returns the selector of
// what is left (the run's unfinished shards; a skip's category and window as the run resolved
// them). A journal of another command or target, or selector flags other than the run's
// (none is fine), is refused with one line.
func (a *app) resumeSelector(o bulkOptions, command string) (query.ShardSelector, *drain.BulkResume, error) {
	r, err := repair.ReadResume(o.Resume, a.helpCommand(command))
	if err != nil {
		return query.ShardSelector{}, nil, tried(err)
	}
	sel, err := a.resumeOf(o, command, r)
	if err != nil {
		r.Unlock()
		return sel, nil, err
	}
	return sel, r, nil
}

// resumeOf is resumeSelector's selector of journal r (repair.ResumeSelector), its Try:
// lines this invocation's.
func (a *app) resumeOf(o bulkOptions, command string, r *drain.BulkResume) (query.ShardSelector, error) {
	sel, err := repair.ResumeSelector(r, command, selector.Flags(o.selectorOptions), repair.ResumeTries{
		Command:   func(run, op string) string { return a.nextCommand(nil, run, "--resume", op) },
		Selectors: func(op string) string { return a.withoutSelectors(command + " --resume " + textsafe.ShellQuote(op)) },
	}, func(flags selector.Flags) (query.ShardSelector, error) {
		return a.shardSelector(selectorOptions(flags), command, r.Started)
	})
	return sel, tried(err)
}

// resumeMode is the mode a bulk reschedule runs in: --group-heads (given: on the command
// line) or not, and on a resume its run's (repair.ResumeGroupHeads).
func (a *app) resumeMode(o rescheduleOptions, given bool) (query.RescheduleMode, error) {
	var err error
	if o.GroupHeads, err = repair.ResumeGroupHeads(o.bulk.resume, a.againWithout(map[string]bool{"group-heads": false}), given, o.GroupHeads); err != nil {
		return "", tried(err)
	}
	return o.mode(), nil
}

// helpCommand is command's --help (command: "outboxctl skip"), with this invocation's
// --context and --schema: a Try that runs as printed where no command line of the user's
// would (an unknown operation, a list file that is not one).
func (a *app) helpCommand(command string) string {
	return a.nextCommand(nil, append(strings.Fields(strings.TrimPrefix(command, "outboxctl")), "--help")...)
}

// againWithout is this invocation's command line without --dsn and the flags in drop (true:
// takes a value), add appended; "" when there is none (a run function called by a test).
func (a *app) againWithout(drop map[string]bool, add ...string) string {
	if len(a.args) == 0 {
		return ""
	}
	all := map[string]bool{"dsn": true}
	for k, v := range drop {
		all[k] = v
	}
	return textsafe.Command(append(a.argsWithout(all), add...)...)
}

// resumeCommand is the line that goes on with bulk run id: this invocation without its
// selector flags, --resume, --archive (a resume writes the run's own) and --dry-run, with
// --resume id; every other flag kept (--schema, --context, --reason, --keep-backoff, --yes).
func (a *app) resumeCommand(command, id string) string {
	if s := a.againWithout(selector.Without(map[string]bool{"resume": true, "archive": true, "dry-run": false}), "--resume", id); s != "" {
		return s
	}
	return textsafe.Command(append(strings.Fields(command), "--resume", id)...)
}

// tried says a service's refusal (refused.Error; repair.Refused is one) as cmd's usage
// errors are said: its Try: line, given the invocation's target like every hint.
func tried(err error) error {
	var r *repair.Refused
	if errors.As(err, &r) {
		return usageErrorf(r.Try, "%s", r.Msg)
	}
	return err
}
