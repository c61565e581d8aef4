package cmdline

import (
	"strings"
	"time"
)

// ListFields is --json given without fields (JSONArgs): list the document's fields.
const ListFields = "\x00list"

// JSONArgs lets --json stand without its field list, as gh's does: `--json` last, or
// followed by another flag, asks for the fields the command's document has. A field list
// is the next argument (`--json shard_scope,attempts`), as a flag value would be.
func JSONArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if args[i] == "--json" && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			out = append(out, "--json="+ListFields)
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// WatchArgs lets --watch take its interval as the next argument (`--watch 1s`), which a flag
// with a default value (a bare --watch) cannot do by itself: an argument that parses as a
// duration right after --watch is its value.
func WatchArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if args[i] == "--watch" && i+1 < len(args) {
			if _, err := time.ParseDuration(args[i+1]); err == nil {
				out = append(out, "--watch="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, args[i])
	}
	return out
}

// Rewritten are the words of args that JSONArgs and WatchArgs wrote in place of a bare
// --json or a --watch INTERVAL.
func Rewritten(args []string) map[string]bool {
	out := map[string]bool{}
	for _, w := range args {
		if w == "--" {
			break
		}
		if w == "--json="+ListFields || strings.HasPrefix(w, "--watch=") {
			out[w] = true
		}
	}
	return out
}
