package enums

import (
	"errors"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// Load is the registry of --enums PATH (limit: --max-enums-bytes), or the built-in one
// without a path. A file over its cap is that error as it is (the input over its cap, not
// the command line: docs/security.md); a file that cannot be read or is not a category.py
// Sentry could import is the operator's to fix (exit 2), with enums lint to see why.
func Load(path string, limit int64) (*Registry, error) {
	if path == "" {
		return Builtin(), nil
	}
	src, err := LoadFile(path, limit)
	if big := (*TooLargeError)(nil); errors.As(err, &big) {
		return nil, err
	}
	var reg *Registry
	if err == nil {
		reg, err = Build(src)
	}
	if err != nil {
		return nil, &exitcode.Outcome{Means: exitcode.Usage, Msg: "`--enums`: " + err.Error(), Try: "outboxctl enums lint " + path}
	}
	return reg, nil
}
