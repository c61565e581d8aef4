package selector

// BulkFlags are the flags only a command's bulk form takes (drain SELECTORS': the selector
// flags, --parallel and --fail-fast), in the order drain SCOPE ID names the first given.
var BulkFlags = []string{"parallel", "fail-fast", "stuck", "at-cap", "scope", "category", "head-category", "added-after", "added-before", "min-depth", "shards-from", "limit"} //nolint:gochecknoglobals // constant list

// Without is drop with BulkFlags added, each marked as cmdline.Without reads it (true: it
// takes a value; --stuck, --at-cap and --fail-fast take none): a command line without its
// selection, for its single form or a resume.
func Without(drop map[string]bool) map[string]bool {
	out := make(map[string]bool, len(drop)+len(BulkFlags))
	for k, v := range drop {
		out[k] = v
	}
	for _, name := range BulkFlags {
		out[name] = name != "stuck" && name != "at-cap" && name != "fail-fast"
	}
	return out
}
