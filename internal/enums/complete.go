package enums

import "strings"

// Complete is the names of kind a shell completes prefix with. The shell keeps only the
// candidates that start with what was typed, case and all: a name typed in lower case (org)
// is completed in lower case (organization, the form the commands print), in upper case as
// Sentry spells it.
func (r *Registry) Complete(kind Kind, prefix string) []string {
	lower := prefix != strings.ToUpper(prefix)
	var out []string
	for _, n := range r.Names(kind) {
		cands := []string{n}
		if lower {
			cands = []string{strings.ToLower(n)}
			if short, ok := strings.CutSuffix(cands[0], "_scope"); ok && kind == KindScope {
				cands = []string{short, cands[0]}
			}
		}
		for _, c := range cands {
			if strings.HasPrefix(c, prefix) || strings.HasPrefix(c, strings.ToUpper(prefix)) {
				out = append(out, c)
			}
		}
	}
	return out
}
