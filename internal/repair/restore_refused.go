package repair

import (
	"errors"
	"strings"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// RestoreShard parses restore's --shard SCOPE/ID (the scope a name the registry resolves
// when the command runs); id parses the ID as the command line's ids are parsed, with its
// hint.
func RestoreShard(shard string, id func(s, hint string) (int64, error)) (scope string, n int64, err error) {
	const hint = "outboxctl restore FILE --shard organization/42"
	scope, s, ok := strings.Cut(shard, "/")
	if !ok {
		return "", 0, refusedf(hint, "invalid `--shard` %q: want SCOPE/ID", shard)
	}
	n, err = id(s, hint)
	return scope, n, err
}

// RestoreRefused makes restore's refusals that are the command line's to fix refusals
// (exit 2), with the line to try: a selection the file cannot satisfy, an unverified
// operation chosen without --unverified (a flag the command line lacks, as for a skip that
// must be named), and --print-sql of webhook payloads. Any other err is returned as it is.
func RestoreRefused(err error, path string) error {
	var se *drain.SelectionError
	var ue *drain.UnverifiedError
	var we *WebhookScriptError
	switch {
	case errors.As(err, &se):
		return refusedf("", "%s", textsafe.Clean(se.Msg))
	case errors.As(err, &ue):
		return refusedf("outboxctl restore "+path+" --operation "+ue.Op.ID+" --unverified", "%s", ue.Error())
	case errors.As(err, &we):
		return refusedf(textsafe.Command("outboxctl", "restore", path, "--operation", we.Op, "--dry-run"), "%s", we.Error())
	}
	return err
}
