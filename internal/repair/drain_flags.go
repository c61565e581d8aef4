package repair

import "math"

// Check checks the drain's flags before anything connects: --max-messages, --rate and
// --handler-timeout.
func (f DrainFlags) Check() error {
	if f.MaxMessages < 0 {
		return refusedf("", "`--max-messages` must not be negative (0 means all)")
	}
	if math.IsNaN(f.Rate) || math.IsInf(f.Rate, 0) || f.Rate < 0 {
		return refusedf("outboxctl drain … --rate 50", "`--rate` must be a finite number of messages per second, 0 for no limit (got %v)", f.Rate)
	}
	if f.HandlerTimeout <= 0 {
		return refusedf("outboxctl drain … --handler-timeout 30s", "`--handler-timeout` must be positive")
	}
	return nil
}

// NeedHandler refuses a drain with no --handler, unless a dry run (the plan only); try is
// the command line to try (the invocation with --dry-run).
func (f DrainFlags) NeedHandler(try string) error {
	if f.Handler == "" && !f.DryRun {
		return refusedf(try, "`--handler` is required: exec:COMMAND, stream:COMMAND, http(s)://URL or discard (or --dry-run to see the plan)")
	}
	return nil
}
