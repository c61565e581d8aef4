package drain

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Document is the JSON a handler receives for one delivery: everything Sentry's signal
// receivers get (reference §3.7), with names beside the integers.
type Document struct {
	// Message carries every field under the same JSON name; its raw payload is not sent
	// (json:"-"), the document's JSON payload below is.
	Message
	Payload json.RawMessage `json:"payload"`
}

// NewDocument builds the handler document of a message. A payload that is not valid JSON
// (a text column can hold anything) is a JSON string here; the handlers refuse such a
// message before building its document (checkPayload), as Sentry cannot load it.
func NewDocument(m Message) Document {
	d := Document{Message: m, Payload: json.RawMessage("null")}
	d.Message.Payload = nil
	if d.Coalesced == nil {
		d.Coalesced = []int64{m.ID}
	}
	if d.CoalescedCount == 0 {
		d.CoalescedCount = int64(len(d.Coalesced))
	}
	if m.Payload != nil {
		if json.Valid([]byte(*m.Payload)) {
			d.Payload = json.RawMessage(*m.Payload)
		} else {
			b, _ := json.Marshal(*m.Payload)
			d.Payload = b
		}
	}
	return d
}

// PayloadError is a message whose payload is not valid JSON, which only a text payload column
// (Sentry before Aug 2025) can hold: Sentry's text JSONField raises loading such a row, so its
// own drain of the shard fails on every attempt. The exec, http and stream handlers refuse
// it the same way (the message fails, the handler never sees it) rather than pass a JSON
// string Sentry would never have delivered.
type PayloadError struct {
	ID    int64
	Start string
}

func (e PayloadError) Error() string {
	return fmt.Sprintf("message %d: its payload is not valid JSON (starts %q): Sentry cannot load this row (its text JSONField raises), so no handler is given it: "+
		"inspect it (outboxctl inspect message %d), then fix the payload or skip the message", e.ID, e.Start, e.ID)
}

// checkPayload is the PayloadError of m, if its payload is not JSON.
func checkPayload(m Message) error {
	if m.Payload == nil || json.Valid([]byte(*m.Payload)) {
		return nil
	}
	start := []rune(*m.Payload)
	if len(start) > 40 {
		start = start[:40]
	}
	return PayloadError{ID: m.ID, Start: string(start)}
}

// ErrHandlerUnavailable marks a failure of the handler itself rather than of one message:
// the command does not exist or cannot run (exit 126/127), the receiver refuses the
// connection, its name does not resolve, TLS fails. When the first delivery of a run fails
// this way, the drain puts the shard's schedule back as it was before the claim.
var ErrHandlerUnavailable = errors.New("handler unavailable")

type unavailable struct{ err error }

func (u unavailable) Error() string { return u.err.Error() }
func (u unavailable) Unwrap() []error {
	return []error{u.err, ErrHandlerUnavailable}
}

// Preflighter is a handler that can check, before the shard is claimed, that it can deliver
// at all (the command exists, the receiver accepts connections).
type Preflighter interface {
	Preflight(ctx context.Context) error
}

// HandlerConfig is what --handler and its companion flags say.
type HandlerConfig struct {
	Spec    string
	Timeout time.Duration
	// Headers are extra HTTP request headers ("Name: value"), their values expanded from the
	// environment ($TOKEN) so that secrets need not be on the command line.
	Headers []string
	Getenv  func(string) string
	// Stderr is where a stream handler relays its co-process's stderr and an exec handler
	// writes its warnings (nil: os.Stderr).
	Stderr io.Writer
}

// ParseHandler reads --handler: exec:COMMAND, stream:COMMAND, http://… or https://…, or discard.
func ParseHandler(c HandlerConfig) (Handler, error) {
	spec := c.Spec
	if len(c.Headers) > 0 && !strings.HasPrefix(spec, "http://") && !strings.HasPrefix(spec, "https://") {
		return nil, fmt.Errorf("`--handler-header` goes with an http(s):// handler")
	}
	switch {
	case spec == "discard":
		return Discard{}, nil
	case strings.HasPrefix(spec, "exec:"):
		command := strings.TrimSpace(strings.TrimPrefix(spec, "exec:"))
		if command == "" {
			return nil, fmt.Errorf("invalid `--handler` %q: exec: needs a command, e.g. exec:'./deliver.sh --region us'", spec)
		}
		// Run through sh -c, like hooks: the operator's command line as written.
		return &Exec{Args: []string{shell, "-c", command}, Command: command, Timeout: c.Timeout, Stderr: c.Stderr}, nil
	case strings.HasPrefix(spec, "stream:"):
		command := strings.TrimSpace(strings.TrimPrefix(spec, "stream:"))
		if command == "" {
			return nil, fmt.Errorf("invalid `--handler` %q: stream: needs a command, e.g. stream:'sentry exec docs/handlers/sentry_deliver.py'", spec)
		}
		return &Stream{Args: []string{shell, "-c", command}, Command: command, Timeout: c.Timeout, Stderr: c.Stderr}, nil
	case strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://"):
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("invalid `--handler` %s: not a URL with a host", RedactURL(spec))
		}
		// A redirect is an answer, not a delivery: Go's client would turn the POST into a
		// GET without the document (and could carry secret headers to another host).
		client := &http.Client{Timeout: c.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		h := &HTTP{URL: spec, Timeout: c.Timeout, Client: client, Header: http.Header{}}
		for _, line := range c.Headers {
			if err := h.addHeader(line, c.Getenv); err != nil {
				return nil, err
			}
		}
		return h, nil
	}
	return nil, fmt.Errorf("invalid `--handler` %q: valid forms are exec:COMMAND, stream:COMMAND, http(s)://URL and discard", RedactURL(spec))
}

// Discard deletes without delivering: for skipping a poison message. The drain archives
// every row first.
type Discard struct{}

// Deliver does nothing.
func (Discard) Deliver(context.Context, Message) error { return nil }

// Exec runs a command once per message with the JSON document on stdin; exit 0 means
// delivered. The end of its stderr becomes the error. The command is killed after Timeout.
type Exec struct {
	Args    []string
	Command string
	Timeout time.Duration
	// Stderr receives warnings about a delivery (nil: os.Stderr).
	Stderr io.Writer
}

// execStderrGrace is how long a delivery waits, after the command exited, for the end of
// its stderr: a process it left behind may hold the pipe open for ever.
const execStderrGrace = 500 * time.Millisecond

func (e *Exec) name() string { return e.Args[len(e.Args)-1] }

// shellWords are sh builtins and keywords a command line may start with: nothing to find
// on PATH for them.
var shellWords = map[string]bool{ //nolint:gochecknoglobals // constant set
	"!": true, "{": true, "(": true, ".": true, ":": true, "[": true, "alias": true, "case": true, "cd": true,
	"echo": true, "eval": true, "exec": true, "exit": true, "export": true, "false": true, "for": true,
	"if": true, "printf": true, "read": true, "set": true, "test": true, "true": true, "ulimit": true,
	"umask": true, "unset": true, "until": true, "wait": true, "while": true, "command": true,
}

// Preflight finds the command the line starts with (after any VAR=value assignments) the
// way the shell would: a path must be an executable file, a bare name must be on PATH. A
// line the small lexer below cannot read for sure is left to the shell.
func (e *Exec) Preflight(context.Context) error {
	word, ok := firstCommandWord(e.Command)
	if !ok || word == "" || shellWords[word] {
		return nil
	}
	if strings.Contains(word, "/") {
		st, err := os.Stat(word)
		switch {
		case err != nil:
			return unavailable{fmt.Errorf("handler command %s: %w", word, errors.Unwrap(err))}
		case st.IsDir() || !executable(st):
			return unavailable{fmt.Errorf("handler command %s is not an executable file", word)}
		}
		return nil
	}
	if _, err := exec.LookPath(word); err != nil {
		return unavailable{fmt.Errorf("handler command %s not found on PATH", word)}
	}
	return nil
}

// firstCommandWord reads sh words (single and double quotes, backslash escapes) until the
// first one that is not a VAR=value assignment. ok is false where the shell would do more
// than split words (expansions, substitutions, operators, an unclosed quote).
func firstCommandWord(line string) (string, bool) {
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		var w strings.Builder
		assignment, quoted := false, false
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			switch c := line[i]; c {
			case '\'', '"':
				end := strings.IndexByte(line[i+1:], c)
				if end < 0 || (c == '"' && strings.ContainsAny(line[i+1:i+1+end], "$`\\")) {
					return "", false
				}
				w.WriteString(line[i+1 : i+1+end])
				i += end + 2
				quoted = true
			case '\\':
				if i+1 >= len(line) {
					return "", false
				}
				w.WriteByte(line[i+1])
				i += 2
				quoted = true
			case '$', '`', '*', '?', '[', ';', '|', '&', '<', '>', '(', ')', '{', '}', '~', '#', '!':
				return "", false
			case '=':
				// NAME= with NAME unquoted makes the word an assignment, whatever follows.
				if !quoted && !assignment && validEnvName(w.String()) {
					assignment = true
				}
				w.WriteByte(c)
				i++
			default:
				w.WriteByte(c)
				i++
			}
		}
		if assignment {
			continue
		}
		return w.String(), true
	}
}

func validEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range s {
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// Deliver runs the command in its own process group: the terminal's Ctrl-C goes to
// outboxctl, which finishes this delivery and stops, rather than to the handler mid-message;
// cancelling ctx (a second Ctrl-C) kills the group. The command's exit status alone decides
// the delivery: its pipes are outboxctl's own (no copying goroutine for exec.Cmd.Wait to
// wait for), so a process it started that keeps its stderr open is a warning, not a failure.
func (e *Exec) Deliver(ctx context.Context, m Message) error {
	if err := checkPayload(m); err != nil {
		return err
	}
	doc, err := json.Marshal(NewDocument(m))
	if err != nil {
		return err
	}
	if e.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, e.Args[0], e.Args[1:]...)
	tree := newProcTree(cmd)
	// The whole group: sh -c's children too.
	cmd.Cancel = tree.kill
	p, err := startExec(cmd, doc)
	if err != nil {
		return unavailable{fmt.Errorf("handler %s: %w", e.name(), err)} // the shell itself did not start
	}
	tree.started()
	defer tree.release()
	err = cmd.Wait()
	stray := p.finish()
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return e.failed(fmt.Errorf("handler %s timed out after %s", e.name(), e.Timeout), &p.tail)
	case err == nil && stray:
		fmt.Fprintf(e.stderr(), "warning: handler %s exited 0 for message %d but left a process holding its stderr: the message counts as delivered; that process's output is no longer read\n",
			render.Escape(e.name()), m.ID)
	}
	if err == nil {
		return nil
	}
	err = e.failed(fmt.Errorf("handler %s: %w", e.name(), err), &p.tail)
	var ee *exec.ExitError
	if errors.As(err, &ee) && (ee.ExitCode() == 126 || ee.ExitCode() == 127) {
		return unavailable{err} // the shell could not find or run the command
	}
	return err
}

// failed adds the end of the command's stderr to err.
func (e *Exec) failed(err error, tail *tailBuffer) error {
	if t := tail.String(); t != "" {
		return fmt.Errorf("%w: %s", err, t)
	}
	return err
}

func (e *Exec) stderr() io.Writer {
	if e.Stderr == nil {
		return os.Stderr
	}
	return e.Stderr
}

// execProc is the pipes of one exec delivery.
type execProc struct {
	stdin   *os.File
	stderr  *os.File
	relayed chan struct{} // closed when the stderr relay returned
	tail    tailBuffer
	closeIn sync.Once
}

// startExec starts cmd with the document on a stdin pipe, stdout to /dev/null and stderr
// through the relay, all of them files, so that Wait returns when the command exits.
func startExec(cmd *exec.Cmd, doc []byte) (*execProc, error) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	ends, err := pipes(2)
	if err != nil {
		return nil, err
	}
	inR, inW, errR, errW := ends[0], ends[1], ends[2], ends[3]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, devNull, errW
	err = cmd.Start()
	closeAll(inR, errW) // the child's ends
	if err != nil {
		closeAll(inW, errR)
		return nil, err
	}
	p := &execProc{stdin: inW, stderr: errR, relayed: make(chan struct{})}
	go func() {
		// A handler that does not read its stdin gets EPIPE here, which is its business.
		_, _ = inW.Write(doc)
		p.closeStdin()
	}()
	go func() {
		defer close(p.relayed)
		relayLines(errR, nil, &p.tail)
	}()
	return p, nil
}

func (p *execProc) closeStdin() { p.closeIn.Do(func() { _ = p.stdin.Close() }) }

// finish, after the command exited, unblocks a document write nobody reads and waits a
// little for the end of stderr; stray says a process the command left still holds it.
func (p *execProc) finish() (stray bool) {
	p.closeStdin()
	t := time.NewTimer(execStderrGrace)
	defer t.Stop()
	select {
	case <-p.relayed:
	case <-t.C:
		stray = true
	}
	_ = p.stderr.Close() // ends the relay's read
	<-p.relayed
	return stray
}

// HTTP POSTs the document; a 2xx answer means delivered. Retries are not its business:
// a failure leaves the shard in backoff, as in Sentry.
type HTTP struct {
	URL     string
	Timeout time.Duration
	Client  *http.Client
	Header  http.Header
}

func (h *HTTP) addHeader(line string, getenv func(string) string) error {
	name, value, ok := strings.Cut(line, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("invalid `--handler-header`: want 'Name: value', e.g. 'Authorization: Bearer $TOKEN'")
	}
	var missing string
	value = os.Expand(strings.TrimSpace(value), func(k string) string {
		v := getenv(k)
		if v == "" && missing == "" {
			missing = k
		}
		return v
	})
	if missing != "" {
		return fmt.Errorf("`--handler-header` %s: environment variable %s is not set", name, missing)
	}
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("`--handler-header` %s: the value holds a line break", name)
	}
	h.Header.Add(name, value)
	return nil
}

// Preflight connects to the receiver (and completes TLS for https) without sending anything.
func (h *HTTP) Preflight(ctx context.Context) error {
	u, err := url.Parse(h.URL)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	timeout := min(h.Timeout, 5*time.Second)
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	d := &net.Dialer{Timeout: timeout}
	var conn net.Conn
	if u.Scheme == "https" {
		conn, err = (&tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}}).DialContext(ctx, "tcp", host)
	} else {
		conn, err = d.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return unavailable{fmt.Errorf("handler %s: %s", RedactURL(h.URL), h.redact(err.Error()))}
	}
	return conn.Close()
}

// Deliver posts the document.
func (h *HTTP) Deliver(ctx context.Context, m Message) error {
	if err := checkPayload(m); err != nil {
		return err
	}
	doc, err := json.Marshal(NewDocument(m))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(doc))
	if err != nil {
		return err
	}
	for k, vs := range h.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "outboxctl")
	resp, err := h.Client.Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return fmt.Errorf("handler %s timed out after %s", RedactURL(h.URL), h.Timeout)
		}
		// url.Error repeats the URL: say it once, redacted.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		out := fmt.Errorf("handler %s: %s", RedactURL(h.URL), h.redact(err.Error()))
		if notReached(err) {
			return unavailable{out}
		}
		return out // the receiver was reached (a reset, an EOF): it may have seen the message
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("handler %s answered %s: %s", RedactURL(h.URL), resp.Status, h.errorBody(resp.Body))
	}
	return nil
}

// maxErrorBody is how much of a receiver's error body its failure message shows, in runes.
const maxErrorBody = 500

// errorBody is the start of a receiver's error body for a failure message: read past the
// 500 runes shown by the longest secret (URL-escaped, 3 bytes a byte), redacted, then cut,
// then redacted again, so that no cut falls through a secret before it is hidden (a cut
// through a token left its prefix, which is not one of the pieces Redact hides). Where
// the read stops it is marked … too, for Redact's cut-edge rule.
func (h *HTTP) errorBody(r io.Reader) string {
	limit := maxErrorBody * utf8.UTFMax
	for _, sec := range h.secrets() {
		limit = max(limit, maxErrorBody*utf8.UTFMax+3*len(sec))
	}
	body, _ := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	text := string(body)
	if len(body) > limit {
		text = strings.ToValidUTF8(text[:limit], "") + "…"
	}
	text = h.redact(strings.Join(strings.Fields(text), " "))
	return h.redact(render.Truncate(text, maxErrorBody))
}

// redact hides, in what the receiver or the transport said, the URL's userinfo and query
// values and every header value sent: a receiver that echoes its request in an error body
// would otherwise print the token outboxctl sent it.
func (h *HTTP) redact(s string) string { return db.Redact(s, h.secrets()...) }

// secrets are what the receiver was given that may be secret: the URL's (db.Secrets) and
// every header value, also with its white space collapsed as a failure message shows it.
func (h *HTTP) secrets() []string {
	secrets := db.Secrets(h.URL)
	for _, vs := range h.Header {
		for _, v := range vs {
			secrets = append(secrets, v, strings.Join(strings.Fields(v), " "))
		}
	}
	return secrets
}

// notReached reports whether an HTTP error happened before the request reached the
// receiver: the name did not resolve, the connection was refused or never made, TLS failed.
func notReached(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &dnsErr), errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &alert):
		return true
	case errors.As(err, &opErr):
		return opErr.Op == "dial"
	}
	return strings.Contains(err.Error(), "tls: ") || strings.Contains(err.Error(), "x509: ")
}

// RedactURL hides what may be a secret in a handler URL (its userinfo, every query value
// and its path segments after the first): db.Redact, the one redaction function, does it.
func RedactURL(raw string) string { return db.Redact(raw) }
