package repair

import "github.com/outboxctl/outboxctl/internal/drain"

// ResumeGroupHeads is whether a bulk reschedule runs with --group-heads: flag, or on a
// resume (r) its run's (the journal's), whatever the flag's default; a --group-heads given
// (given: on the command line) that says otherwise is refused (ResumeFlag, its Try the
// invocation without the flag: without): the run's shards would be rescheduled two ways,
// and its summary and audit line name one mode.
func ResumeGroupHeads(r *drain.BulkResume, without string, given, flag bool) (bool, error) {
	if r == nil {
		return flag, nil
	}
	ran := map[bool]string{true: "with --group-heads (only the lowest row of each coalesce group rewritten)", false: "without --group-heads (every row rewritten)"}[r.GroupHeads]
	return ResumeFlag(without, "outboxctl reschedule", r.Op, given, flag, r.GroupHeads, ran+": resume it without --group-heads, which keeps the run's mode")
}
