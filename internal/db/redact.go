package db

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

// mask stands in for whatever is hidden.
const mask = "xxxxx"

// minFragment is the shortest piece of a secret hidden wherever it appears. A parser that
// misreads a connection string (an unencoded @ or / in a password) echoes pieces of the
// password cut at its punctuation: each piece of 4 bytes or more is hidden. Shorter pieces
// are left: hiding every "db" or "5432" would hide the message, and 3 bytes of a password
// say little. A whole secret shorter than this is still hidden, where it stands as a word.
const minFragment = 4

// maxFragmented bounds the secrets cut into pieces: the search costs the secret's length
// times the text's, and no password is longer. A longer secret is hidden whole only.
const maxFragmented = 1024

// Redact is outboxctl's one redaction function. It hides in s each of secrets (a password,
// a token, a header's value), also URL-escaped or decoded, and every piece of one cut at its
// punctuation (see minFragment); then, in every URL inside s, what may be a secret: a
// database URL (postgres://, redis://) keeps its user and loses its password, any other URL
// (a drain handler's) loses its whole userinfo, every query value (tokens travel as
// ?token=…) and its path segments after the first (a webhook's token is in its path),
// keeping the names and the first segment so it stays recognisable. Beside a cut mark (…)
// a run of 4 bytes or more that a cut through a secret left is hidden too. A secret shorter
// than 4 bytes is hidden only as a whole value. Every password= pair is hidden too. The secrets of a connection string come from Secrets, which reads its raw text.
func Redact(s string, secrets ...string) string {
	return redactPasswordPairs(redactURLs(hideSecrets(s, secrets)))
}

// RedactDSN redacts a connection string or URL, or a text holding some, with the secrets
// Secrets reads in it.
func RedactDSN(s string) string { return Redact(s, Secrets(s)...) }

// Secrets returns what may be secret in a connection string (a postgres:// or redis:// URL,
// libpq key=value pairs) or a handler URL, read from its raw text without trusting a
// parser: a parser that takes an unencoded @ in a password for the end of the userinfo
// (as libpq and pgx do: the first @) would leave the rest of the password in the host.
// In a URL the userinfo ends at the first @ after which the rest reads as a URL's host
// list, path and key=value query (see cleanAfterUserinfo), else at the last @: a password
// may hold @ / : ? # and spaces, a host never holds @. A libpq key=value string gives its
// password values. Any other text (an error message) gives the secrets of each URL in it,
// up to white space: its password= pairs are hidden by Redact where they stand.
func Secrets(s string) []string {
	if scheme, rest, ok := cutScheme(strings.TrimSpace(s)); ok {
		return urlSecrets(scheme, rest)
	}
	if startsKeyword(strings.TrimSpace(s)) {
		return pairSecrets(s)
	}
	var out []string
	forEachURL(s, func(scheme, rest string) string {
		out = append(out, urlSecrets(scheme, rest)...)
		return scheme + "://" + rest
	})
	return out
}

// cutScheme splits s, when it is one URL, into its scheme and what follows "://".
func cutScheme(s string) (scheme, rest string, ok bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return "", "", false
	}
	for j := 0; j < i; j++ {
		if !isSchemeByte(s[j]) {
			return "", "", false
		}
	}
	return s[:i], s[i+3:], true
}

func isDatabaseScheme(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql", "redis", "rediss", "":
		return true
	}
	return false
}

// urlSecrets: a database URL's password (after the userinfo's first colon) and its
// password= and sslpassword= query values; any other URL's whole userinfo and every query
// value.
func urlSecrets(scheme, rest string) []string {
	var out []string
	dbURL := isDatabaseScheme(scheme)
	if at := userinfoEnd(rest); at >= 0 {
		// A database URL's user is no secret; a handler URL's userinfo may be a token.
		_, pw, _ := strings.Cut(rest[:at], ":")
		out = append(out, pw)
		if !dbURL {
			out = append(out, rest[:at])
		}
		rest = rest[at+1:]
	}
	if !dbURL {
		out = append(out, hiddenSegments(rest)...)
	}
	_, query, ok := strings.Cut(rest, "?")
	if !ok {
		return out
	}
	for _, kv := range splitQuery(query) {
		k, v, _ := strings.Cut(kv, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		k = strings.ToLower(k)
		if !dbURL || k == "password" || k == "sslpassword" {
			out = append(out, v)
		}
	}
	return out
}

// splitQuery splits a query at each & that starts a new key=value pair: a value may hold an
// unencoded & (a password), which a split at every & would leave half outside the value.
func splitQuery(q string) []string {
	if i := strings.IndexByte(q, '#'); i >= 0 && !strings.Contains(q[i:], "=") {
		q = q[:i]
	}
	var out []string
	start := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '&' && startsPair(q[i+1:]) {
			out = append(out, q[start:i])
			start = i + 1
		}
	}
	return append(out, q[start:])
}

// startsPair reports whether s starts with a query key and its "=".
func startsPair(s string) bool {
	n := 0
	for n < len(s) && isKeyByte(s[n]) {
		n++
	}
	return n > 0 && n < len(s) && s[n] == '='
}

func isKeyByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '.' || c == '-' || c == '%'
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// userinfoEnd returns the index of the @ ending rest's userinfo (rest follows "://"), or -1.
// The parsers' reading (the first @ before any /) wins when what follows it is a clean URL
// tail; else the first @ followed by a clean tail; else the last @.
func userinfoEnd(rest string) int {
	first := strings.IndexAny(rest, "@/")
	if first < 0 || rest[first] != '@' {
		first = -1
	}
	if first < 0 && cleanAfterUserinfo(rest) || first >= 0 && cleanAfterUserinfo(rest[first+1:]) {
		return first
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == '@' && cleanAfterUserinfo(rest[i+1:]) {
			return i
		}
	}
	return strings.LastIndexByte(rest, '@')
}

// cleanAfterUserinfo reports whether p reads as a URL after its userinfo: hosts (names,
// percent-encoded socket paths, [IPv6]) each with an optional numeric port, separated by
// commas; then an optional path without @ or spaces; an optional query of key=value pairs
// (a value may hold @: an application_name of me@example.com); an optional fragment
// without @.
func cleanAfterUserinfo(p string) bool {
	i := 0
	for {
		if i < len(p) && p[i] == '[' {
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				return false
			}
			i += j + 1
		}
		for i < len(p) && (isAlnum(p[i]) || strings.IndexByte("-._~%", p[i]) >= 0) {
			i++
		}
		if i < len(p) && p[i] == ':' {
			i++
			for i < len(p) && p[i] >= '0' && p[i] <= '9' {
				i++
			}
		}
		if i < len(p) && p[i] == ',' {
			i++
			continue
		}
		break
	}
	if i < len(p) && p[i] == '/' {
		for i < len(p) && p[i] != '?' && p[i] != '#' {
			if p[i] == '@' || p[i] == ' ' {
				return false
			}
			i++
		}
	}
	if i < len(p) && p[i] == '?' {
		end := strings.IndexByte(p[i:], '#')
		if end < 0 {
			end = len(p)
		} else {
			end += i
		}
		for _, kv := range splitQuery(p[i+1 : end]) {
			if kv != "" && !startsPair(kv) {
				return false
			}
		}
		i = end
	}
	if i < len(p) && p[i] == '#' {
		return !strings.ContainsRune(p[i:], '@')
	}
	return i == len(p)
}

// pairSecrets returns the value of every password= (and sslpassword=) pair of a libpq
// key=value string: quoted, as written and unescaped; unquoted, up to the white space
// before the next key=, since a password may hold a space that libpq would have cut it at.
func pairSecrets(s string) []string {
	var out []string
	for start := 0; ; {
		j := strings.Index(s[start:], "password")
		if j < 0 {
			return out
		}
		j += start
		start = j + len("password")
		k := start
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k >= len(s) || s[k] != '=' {
			continue
		}
		k++
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k < len(s) && s[k] == '\'' {
			var raw, plain strings.Builder
			for k++; k < len(s) && s[k] != '\''; k++ {
				raw.WriteByte(s[k])
				if s[k] == '\\' && k+1 < len(s) {
					k++
					raw.WriteByte(s[k])
				}
				plain.WriteByte(s[k])
			}
			out = append(out, raw.String(), plain.String())
			continue
		}
		end := k
		for end < len(s) && !(isSpace(s[end]) && startsKeyword(strings.TrimLeft(s[end:], " \t\n"))) {
			end++
		}
		out = append(out, strings.TrimRight(s[k:end], " \t\n"))
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// startsKeyword reports whether s starts with a libpq keyword and its "=".
func startsKeyword(s string) bool {
	n := 0
	for n < len(s) && (isAlnum(s[n]) || s[n] == '_') {
		n++
	}
	return n > 0 && strings.HasPrefix(strings.TrimLeft(s[n:], " "), "=")
}

// hideSecrets replaces, in one pass over s, every occurrence of each secret's forms and
// their pieces with mask (a run of hidden bytes becomes one mask).
func hideSecrets(s string, secrets []string) string {
	hide := make([]bool, len(s))
	found := false
	for _, sec := range secrets {
		for _, form := range secretForms(sec) {
			found = markSecret(s, form, hide) || found
			found = markCutEdges(s, form, hide) || found
		}
	}
	if !found {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !hide[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(mask)
		for i < len(s) && hide[i] {
			i++
		}
	}
	return b.String()
}

// secretForms is a secret as written, URL-escaped (as a DSN carries it) and decoded.
func secretForms(sec string) []string {
	if sec == "" {
		return nil
	}
	forms := []string{sec, url.QueryEscape(sec), url.PathEscape(sec)}
	if dec, err := url.PathUnescape(sec); err == nil {
		forms = append(forms, dec)
	}
	sort.Strings(forms)
	return slices.Compact(forms)
}

// markSecret marks in hide every occurrence in s of p, and of each piece of p at least
// minFragment long that starts after one of its punctuation bytes (a byte that is not a
// letter or a digit) or at its start, and ends before one or at its end: where a parser
// cuts a misread password. It reports whether it marked anything.
func markSecret(s, p string, hide []bool) bool {
	found := false
	mark := func(from, n int) {
		for i := from; i < from+n; i++ {
			hide[i] = true
		}
		found = true
	}
	if len(p) < minFragment || len(p) > maxFragmented {
		for k := 0; k+len(p) <= len(s); {
			j := strings.Index(s[k:], p)
			if j < 0 {
				break
			}
			j += k
			if len(p) > maxFragmented || valueEdge(s, j-1) && valueEdge(s, j+len(p)) {
				mark(j, len(p))
			}
			k = j + 1
		}
		return found
	}
	starts, ends := pieceBounds(p)
	for _, i := range starts {
		if len(p)-i < minFragment {
			break
		}
		for k := 0; k+minFragment <= len(s); k++ {
			n := 0
			for k+n < len(s) && i+n < len(p) && s[k+n] == p[i+n] {
				n++
			}
			longest := 0
			for _, j := range ends {
				if j-i >= minFragment && j-i <= n {
					longest = j - i
				}
			}
			if longest > 0 {
				mark(k, longest)
			}
		}
	}
	return found
}

// pieceBounds are the offsets where a piece of p may start (its start, after each byte that
// is not a letter or a digit) and end (before each such byte, its end), ascending.
func pieceBounds(p string) (starts, ends []int) {
	starts = []int{0}
	for i := 0; i < len(p); i++ {
		if !isAlnum(p[i]) {
			starts = append(starts, i+1)
			ends = append(ends, i)
		}
	}
	return starts, append(ends, len(p))
}

// valueEdge reports whether i is outside s or s has there a byte that ends a value (white
// space, a quote, = & , ; and brackets): a secret shorter than minFragment is hidden only
// as a whole value (x=1, "abc"), not wherever its bytes stand between punctuation, which
// hid the 1 of every 127.0.0.1 for a ?x=1.
func valueEdge(s string, i int) bool {
	return i < 0 || i >= len(s) || strings.IndexByte(" \t\r\n\"'`=&,;()[]{}<>", s[i]) >= 0
}

// cutMark is what marks a cut in text outboxctl shortens (render.Truncate, a handler's
// stderr tail, a receiver's error body).
const cutMark = "…"

// markCutEdges marks in hide, beside every cutMark in s, a run of at least minFragment bytes
// that a cut through p (or through one of its pieces) left: before the mark a prefix of a
// piece, after it a suffix of one. Redact's other rules hide only whole pieces, and a cut
// makes a piece of its own. It reports whether it marked anything.
func markCutEdges(s, p string, hide []bool) bool {
	if len(p) < minFragment || len(p) > maxFragmented {
		return false
	}
	starts, ends := pieceBounds(p)
	found := false
	for k := 0; ; {
		c := strings.Index(s[k:], cutMark)
		if c < 0 {
			return found
		}
		c += k
		k = c + len(cutMark)
		before, after := longestEdge(s[:c], p, starts, true), longestEdge(s[k:], p, ends, false)
		for i := c - before; i < c; i++ {
			hide[i] = true
		}
		for i := k; i < k+after; i++ {
			hide[i] = true
		}
		found = found || before > 0 || after > 0
	}
}

// longestEdge is the length of the longest run of at least minFragment bytes at the end of
// s (tail) that is a prefix of p[b:] for one of bounds, or at the start of s (!tail) that is
// a suffix of p[:b].
func longestEdge(s, p string, bounds []int, tail bool) int {
	longest := 0
	for _, b := range bounds {
		piece := p[b:]
		if !tail {
			piece = p[:b]
		}
		for n := min(len(piece), len(s)); n > longest && n >= minFragment; n-- {
			if tail && strings.HasSuffix(s, piece[:n]) || !tail && strings.HasPrefix(s, piece[len(piece)-n:]) {
				longest = n
				break
			}
		}
	}
	return longest
}

// redactURLs rewrites every scheme://… token of s (up to white space or a quote).
func redactURLs(s string) string { return forEachURL(s, redactURL) }

// forEachURL replaces every scheme://… token of s (up to white space or a quote) with fn's
// answer for its scheme and what follows "://".
func forEachURL(s string, fn func(scheme, rest string) string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		j := i
		for j > 0 && isSchemeByte(s[j-1]) {
			j--
		}
		rest := s[i+3:]
		end := strings.IndexAny(rest, " \t\n\"'`")
		if end < 0 {
			end = len(rest)
		}
		// A colon or comma right after a URL is the sentence's ("handler URL: refused").
		for end > 0 && (rest[end-1] == ':' || rest[end-1] == ',') {
			end--
		}
		b.WriteString(s[:j])
		b.WriteString(fn(s[j:i], rest[:end]))
		s = rest[end:]
	}
	b.WriteString(s)
	return b.String()
}

func isSchemeByte(c byte) bool {
	return isAlnum(c) || c == '+' || c == '-' || c == '.'
}

// redactURL redacts one URL given as its scheme and what follows "://".
func redactURL(scheme, rest string) string {
	if isDatabaseScheme(scheme) {
		if at := userinfoEnd(rest); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				return scheme + "://" + rest[:c] + ":" + mask + rest[at:]
			}
		}
		return scheme + "://" + rest
	}
	u, err := url.Parse(scheme + "://" + rest)
	if err != nil || u.Host == "" {
		// Not a URL we can take apart: hide everything after the scheme's authority.
		return scheme + "://" + mask
	}
	if u.User != nil {
		u.User = url.User(mask)
	}
	if segs := strings.Split(u.EscapedPath(), "/"); len(segs) > 2 {
		for i := 2; i < len(segs); i++ {
			if segs[i] != "" {
				segs[i] = mask
			}
		}
		u.RawPath = strings.Join(segs, "/")
		u.Path, _ = url.PathUnescape(u.RawPath)
	}
	if u.RawQuery != "" {
		q := u.Query()
		parts := make([]string, 0, len(q))
		for k := range q {
			parts = append(parts, url.QueryEscape(k)+"="+mask)
		}
		sort.Strings(parts)
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// hiddenSegments are the path segments after the first of a handler URL given as what
// follows "://": a webhook's address carries its token there (Slack's
// /services/T…/B…/TOKEN, Discord's /api/webhooks/ID/TOKEN), and nothing tells a token from
// a route. The first segment stays, so the receiver's route remains recognisable.
func hiddenSegments(rest string) []string {
	if at := userinfoEnd(rest); at >= 0 {
		rest = rest[at+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return nil
	}
	segs := strings.Split(rest[slash+1:], "/")
	var out []string
	for _, seg := range segs[1:] {
		if seg != "" {
			out = append(out, seg)
		}
	}
	return out
}

// redactPasswordPairs hides the value of every password= pair (libpq key=value DSNs, and
// ?password= in a URL), quoted or not.
func redactPasswordPairs(out string) string {
	for _, key := range []string{"password=", "password ="} {
		for start := 0; ; {
			j := strings.Index(out[start:], key)
			if j < 0 {
				break
			}
			j += start + len(key)
			k := j
			if k < len(out) && (out[k] == '\'' || out[k] == '"') {
				q := out[k]
				k++
				for k < len(out) && out[k] != q {
					k++
				}
				if k < len(out) {
					k++
				}
			} else {
				for k < len(out) && strings.IndexByte(" &\n`\"'", out[k]) < 0 {
					k++
				}
			}
			out = out[:j] + mask + out[k:]
			start = j + len(mask)
		}
	}
	return out
}
