package drain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// Document is the JSON a handler receives for one delivery: everything Sentry's signal
// receivers get (reference §3.7), with names beside the integers.
type Document struct {
	Table        string          `json:"table"`
	Silo         string          `json:"silo"`
	Cell         string          `json:"cell,omitempty"`
	ShardScope   int             `json:"shard_scope"`
	ScopeName    string          `json:"shard_scope_name"`
	ShardID      int64           `json:"shard_identifier"`
	Category     int             `json:"category"`
	CategoryName string          `json:"category_name"`
	ObjectID     int64           `json:"object_identifier"`
	ID           int64           `json:"id"`
	Payload      json.RawMessage `json:"payload"`
	Coalesced    []int64         `json:"coalesced_ids"`
	// CoalescedCount is how many rows of the group were waiting at delivery; coalesced_ids
	// lists the first 100 ids up to the delivered one with --coalesced-ids (else only it).
	CoalescedCount int64     `json:"coalesced_count"`
	DateAdded      time.Time `json:"date_added"`
	ScheduledFor   time.Time `json:"scheduled_for"`
}

// NewDocument builds the handler document of a message. A payload that is not valid JSON
// (a text column can hold anything) is passed as a JSON string rather than dropped.
func NewDocument(m Message) Document {
	d := Document{Table: m.Table, Silo: m.Silo, Cell: m.Cell, ShardScope: m.Scope, ScopeName: m.ScopeName,
		ShardID: m.Shard, Category: m.Category, CategoryName: m.CategoryName, ObjectID: m.Object, ID: m.ID,
		Coalesced: m.Coalesced, CoalescedCount: m.CoalescedCount, DateAdded: m.DateAdded, ScheduledFor: m.ScheduledFor, Payload: json.RawMessage("null")}
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

// ParseHandler reads --handler: exec:COMMAND, http://… or https://…, or discard.
func ParseHandler(spec string, timeout time.Duration) (Handler, error) {
	switch {
	case spec == "discard":
		return Discard{}, nil
	case strings.HasPrefix(spec, "exec:"):
		command := strings.TrimSpace(strings.TrimPrefix(spec, "exec:"))
		if command == "" {
			return nil, fmt.Errorf("invalid `--handler` %q: exec: needs a command, e.g. exec:'./deliver.sh --region us'", spec)
		}
		// Run through sh -c, like hooks: the operator's command line as written.
		return &Exec{Args: []string{"/bin/sh", "-c", command}, Timeout: timeout}, nil
	case strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://"):
		return &HTTP{URL: spec, Timeout: timeout, Client: &http.Client{Timeout: timeout}}, nil
	}
	return nil, fmt.Errorf("invalid `--handler` %q: valid forms are exec:COMMAND, http(s)://URL and discard", spec)
}

// Discard deletes without delivering: for skipping a poison message. The drain archives
// every row first.
type Discard struct{}

// Deliver does nothing.
func (Discard) Deliver(context.Context, Message) error { return nil }

// Exec runs a command once per message with the JSON document on stdin; exit 0 means
// delivered. stderr becomes the error. The command is killed after Timeout.
type Exec struct {
	Args    []string
	Timeout time.Duration
}

func (e *Exec) name() string { return e.Args[len(e.Args)-1] }

// Deliver runs the command.
func (e *Exec) Deliver(ctx context.Context, m Message) error {
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
	cmd.Stdin = bytes.NewReader(doc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("handler %s timed out after %s", e.name(), e.Timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		if msg == "" {
			return fmt.Errorf("handler %s: %w", e.name(), err)
		}
		return fmt.Errorf("handler %s: %w: %s", e.name(), err, strings.Join(strings.Fields(msg), " "))
	}
	return nil
}

// HTTP POSTs the document; a 2xx answer means delivered. Retries are not its business:
// a failure leaves the shard in backoff, as in Sentry.
type HTTP struct {
	URL     string
	Timeout time.Duration
	Client  *http.Client
}

// Deliver posts the document.
func (h *HTTP) Deliver(ctx context.Context, m Message) error {
	doc, err := json.Marshal(NewDocument(m))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(doc))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "outboxctl")
	resp, err := h.Client.Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return fmt.Errorf("handler %s timed out after %s", RedactURL(h.URL), h.Timeout)
		}
		return fmt.Errorf("handler %s: %s", RedactURL(h.URL), strings.ReplaceAll(err.Error(), h.URL, RedactURL(h.URL)))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("handler %s answered %s: %s", RedactURL(h.URL), resp.Status, strings.Join(strings.Fields(string(body)), " "))
	}
	return nil
}

// RedactURL hides the userinfo (credentials) of a handler URL.
func RedactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		authority, path, _ := strings.Cut(u[i+3:], "/")
		if at := strings.LastIndex(authority, "@"); at >= 0 {
			out := u[:i+3] + "xxxxx@" + authority[at+1:]
			if strings.Contains(u[i+3:], "/") {
				out += "/" + path
			}
			return out
		}
	}
	return u
}
