package mailbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Mask stands in for a redacted value.
const Mask = "[redacted]"

// A webhook payload's request is what a provider sent Sentry: its signature headers
// (X-Hub-Signature-256 is an HMAC of the body under the integration's webhook secret), its
// Authorization, cookies, and often a token in the body (Slack's form posts carry one, a
// JSON body may hold an installation token). outboxctl shows a request only through Redact,
// unless --show-secrets says otherwise.

// sensitiveName says whether a header, JSON key or form field holds a secret by its name:
// Authorization, Cookie, X-Hub-Signature*, anything naming a token, secret, password,
// signature, API key, private key, credential, JWT or session. "auth" alone, not as a
// part: "author" is a GitHub payload's commit author.
func sensitiveName(name string) bool {
	n := strings.ToLower(name)
	if n == "auth" || n == "cookie" || n == "set-cookie" {
		return true
	}
	return secretNamePattern().MatchString(n)
}

var secretNamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`authorization|token|secret|passw|signature|api[-_]?key|private[-_]?key|credential|jwt|session|cookie|x-hub-signature`)
})

// secretValuePattern finds values that are secrets whatever they are called: a bearer or
// basic credential, a JWT, GitHub's, GitLab's and Slack's token formats.
var secretValuePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:bearer|basic|token|jwt)\s+[A-Za-z0-9._~+/=-]{8,}` +
		`|\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*` +
		`|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}|\bgithub_pat_[A-Za-z0-9_]{16,}` +
		`|\bglpat-[A-Za-z0-9_-]{16,}|\bxox[abposr]-[A-Za-z0-9-]{8,}` +
		`|\bsha(?:1|256)=[0-9a-fA-F]{16,}`)
})

// redactValue hides the secrets secretValuePattern finds in a value whose name is not
// sensitive.
func redactValue(s string) string { return secretValuePattern().ReplaceAllString(s, Mask) }

// Request is a payload's request as shown: path, headers (JSON text, in their stored
// order) and body, with their secrets redacted unless shown on purpose.
type Request struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	Headers string `json:"headers"`
	Body    string `json:"body"`
	// Redacted says the values named secret were replaced by [redacted] (false only with
	// --show-secrets).
	Redacted bool `json:"redacted"`
}

// RedactRequest is the request of a payload with its secrets hidden (show: as stored).
func RedactRequest(method, path, headers, body string, show bool) Request {
	if show {
		return Request{Method: method, Path: path, Headers: headers, Body: body}
	}
	return Request{Method: redactValue(method), Path: RedactPath(path), Headers: RedactHeaders(headers), Body: RedactBody(body), Redacted: true}
}

// RedactPath hides the values of the query parameters named secret and any secret-shaped
// value in the path.
func RedactPath(p string) string {
	path, q, ok := strings.Cut(p, "?")
	if !ok {
		return redactValue(p)
	}
	return redactValue(path) + "?" + redactForm(q)
}

// RedactHeaders hides the values of the headers named secret (Sentry stores the headers as
// a JSON object: json.dumps of request.headers), keeping their order. Headers that are not
// a JSON object are hidden whole: what they hold cannot be told apart.
func RedactHeaders(h string) string {
	out, err := redactJSON([]byte(h), true)
	if err != nil {
		return fmt.Sprintf("[%d bytes of headers that are not a JSON object, hidden: --show-secrets shows them]", len(h))
	}
	return out
}

// RedactBody hides the secrets of a request body: in a JSON body the values of keys named
// secret (at any depth); in a form body (Slack's) the fields named secret, and a field
// holding JSON (Slack's payload=) redacted as JSON; in any body the secret-shaped values.
func RedactBody(b string) string {
	t := strings.TrimSpace(b)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if out, err := redactJSON([]byte(t), false); err == nil {
			return out
		}
	}
	if !strings.ContainsAny(t, " \n{") && strings.Contains(t, "=") {
		return redactForm(t)
	}
	return redactValue(b)
}

// redactForm hides the fields named secret of an application/x-www-form-urlencoded text,
// keeping the order and encoding of the others; a field that decodes to JSON is redacted as
// JSON.
func redactForm(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if sensitiveName(name) {
			parts[i] = k + "=" + url.QueryEscape(Mask)
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			parts[i] = k + "=" + redactValue(v)
			continue
		}
		if t := strings.TrimSpace(val); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if out, jerr := redactJSON([]byte(t), false); jerr == nil {
				parts[i] = k + "=" + url.QueryEscape(out)
				continue
			}
		}
		if r := redactValue(val); r != val {
			parts[i] = k + "=" + url.QueryEscape(r)
		}
	}
	return strings.Join(parts, "&")
}

// redactJSON re-writes a JSON document with the values of keys named secret masked and
// secret-shaped strings hidden, keeping key order (a decoder's token stream). object
// requires the top level to be an object (headers).
func redactJSON(src []byte, object bool) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var b strings.Builder
	if object {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return "", fmt.Errorf("not a JSON object")
		}
		b.WriteByte('{')
		if err := redactObject(dec, &b); err != nil {
			return "", err
		}
	} else if err := redactAny(dec, &b, false); err != nil {
		return "", err
	}
	if dec.More() {
		return "", fmt.Errorf("trailing data")
	}
	if _, err := dec.Token(); err == nil {
		return "", fmt.Errorf("trailing data")
	}
	return b.String(), nil
}

// redactAny writes the next value of dec; masked writes Mask in its place (its key was
// named secret), whatever it is, reading past it.
func redactAny(dec *json.Decoder, b *strings.Builder, masked bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); ok {
		if masked {
			b.WriteString(quote(Mask))
			return skipRest(dec, d)
		}
		b.WriteString(d.String())
		if d == '{' {
			return redactObject(dec, b)
		}
		for dec.More() {
			if err := redactAny(dec, b, false); err != nil {
				return err
			}
			if dec.More() {
				b.WriteByte(',')
			}
		}
		_, err := dec.Token()
		b.WriteByte(']')
		return err
	}
	if masked {
		if tok == nil {
			b.WriteString("null") // nothing to hide
			return nil
		}
		b.WriteString(quote(Mask))
		return nil
	}
	switch v := tok.(type) {
	case string:
		b.WriteString(quote(redactString(v)))
	case json.Number:
		b.WriteString(v.String())
	case bool:
		fmt.Fprint(b, v)
	case nil:
		b.WriteString("null")
	}
	return nil
}

// redactString hides the secrets of a JSON string value; one holding JSON itself (a
// provider's nested payload) is redacted as JSON.
func redactString(s string) string {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if out, err := redactJSON([]byte(t), false); err == nil {
			return out
		}
	}
	return redactValue(s)
}

// redactObject writes the members of an object whose { was read and written.
func redactObject(dec *json.Decoder, b *strings.Builder) error {
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object key is not a string")
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(quote(key))
		b.WriteByte(':')
		if err := redactAny(dec, b, sensitiveName(key)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	b.WriteByte('}')
	return nil
}

// skipRest reads past the rest of the array or object opened by d.
func skipRest(dec *json.Decoder, d json.Delim) error {
	depth := 1
	for depth > 0 {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if x, ok := tok.(json.Delim); ok {
			if x == '{' || x == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	_ = d
	return nil
}

func quote(s string) string {
	out, _ := json.Marshal(s)
	return string(out)
}
