package status

import "github.com/outboxctl/outboxctl/internal/exitcode"

// Verdict is the status's: a malformed option, the cursors that could not be read (exit
// 1), or with --exit-status (exitStatus) the tables not complete ("not yet", 8).
func (rep Report) Verdict(exitStatus bool) error {
	switch {
	case rep.OptionErr != nil:
		return rep.OptionErr
	case rep.Failed > 0:
		return exitcode.Verdictf(exitcode.Runtime, "the cursors of %d table(s) could not be read or are malformed (see the note column)", rep.Failed)
	case exitStatus && rep.Incomplete > 0:
		return exitcode.Verdictf(exitcode.Pending, "%d of %d table(s) not complete", rep.Incomplete, len(rep.Rows))
	}
	return nil
}
