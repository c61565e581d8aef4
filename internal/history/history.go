// Package history reads a context's recent past from Prometheus: the series outboxctl's
// exporter serves (internal/exporter, label context), over a window ending now, for top's
// sparklines. Nothing is stored: Prometheus keeps the samples, and each read asks it for
// the window again with one range query (/api/v1/query_range).
package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/outboxctl/outboxctl/internal/db"
)

// The defaults: three hours of history in 20 points (a point every 9½ minutes), each read
// under a 5 s deadline (top shows its error in the pane instead of waiting longer).
const (
	DefaultWindow  = 3 * time.Hour
	DefaultPoints  = 20
	DefaultTimeout = 5 * time.Second
	// maxBody caps an answer: 4 series of 20 points take 2 KB; a bigger answer is not
	// the exporter's series.
	maxBody = 1 << 20
)

// The series a read asks for, by the name the query gives each (label series): the
// outbox's rows (the exporter's exact count, summed over cells, scopes and categories) and
// its oldest row's age (the oldest cell's), and the same two of the webhook mailboxes
// (control silo only: a cell has no such series).
const (
	Depth         = "depth"
	Oldest        = "oldest"
	MailboxDepth  = "mailbox_depth"
	MailboxOldest = "mailbox_oldest"
)

// families are the exporter's families behind each series, and how a context's series of
// one are folded into one line.
var families = []struct{ name, agg, family string }{ //nolint:gochecknoglobals // constant table
	{Depth, "sum", "outboxctl_outbox_rows"},
	{Oldest, "max", "outboxctl_oldest_row_age_seconds"},
	{MailboxDepth, "sum", "outboxctl_webhook_payloads"},
	{MailboxOldest, "max", "outboxctl_webhook_oldest_payload_age_seconds"},
}

// Query is the one PromQL expression a read sends for context: each series labelled
// series="NAME" (label_replace on an empty label), joined with or.
func Query(context string) string {
	parts := make([]string, len(families))
	for i, f := range families {
		parts[i] = fmt.Sprintf(`label_replace(%s(%s{context=%s}), "series", %q, "", "")`, f.agg, f.family, strconv.Quote(context), f.name)
	}
	return strings.Join(parts, " or ")
}

// History is one read: each series' values over the window, oldest first, one every
// Window/(points-1), NaN where Prometheus had no sample (the exporter was down, or not yet
// running); a series Prometheus does not have is absent from Series.
type History struct {
	Series map[string][]float64
	Window time.Duration
	// At is when it was read (the window's end); Err what failed, one line, its URL's
	// credentials redacted.
	At  time.Time
	Err error
}

// Latest is the last value of series name, and whether there is one (the window's end had
// a sample).
func (h History) Latest(name string) (float64, bool) {
	v := h.Series[name]
	if len(v) == 0 || math.IsNaN(v[len(v)-1]) {
		return 0, false
	}
	return v[len(v)-1], true
}

// Client reads from one Prometheus server (its URL may carry a path prefix, and basic auth
// credentials as user:password@, which are sent and never printed).
type Client struct {
	base    *url.URL
	http    *http.Client
	queries atomic.Int64
}

// New is a client of the Prometheus server at raw (http or https), each request under
// timeout.
func New(raw string, timeout time.Duration) (*Client, error) {
	u, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{base: u, http: &http.Client{Timeout: timeout}}, nil
}

// Parse checks a Prometheus URL: http or https, a host, no query or fragment (the API's
// path is appended to it). Its error never repeats a password.
func Parse(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: want http://HOST:9090 or https://HOST/PREFIX", db.RedactDSN(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: want http://HOST:9090 or https://HOST/PREFIX (no query)", db.RedactDSN(raw))
	}
	return u, nil
}

// Queries is how many range queries the client has sent.
func (c *Client) Queries() int64 { return c.queries.Load() }

// Read is context's series over the window ending now, points values each (at least 2).
func (c *Client) Read(ctx context.Context, context string, window time.Duration, points int, now time.Time) History {
	points = max(points, 2)
	h := History{Window: window, At: now}
	start := now.Add(-window)
	step := window / time.Duration(points-1)
	if step < time.Millisecond {
		h.Err = errors.New("prometheus: the history window is too short")
		return h
	}
	series, err := c.queryRange(ctx, Query(context), start, now, step)
	if err != nil {
		h.Err = errors.New(oneLine(db.RedactDSN("prometheus: " + err.Error())))
		return h
	}
	h.Series = map[string][]float64{}
	for name, pts := range series {
		vals := make([]float64, points)
		for i := range vals {
			vals[i] = math.NaN()
		}
		for _, p := range pts {
			// Prometheus evaluates at start + k·step; the point's index is k.
			if k := int(math.Round(float64(p.at.Sub(start)) / float64(step))); k >= 0 && k < points {
				vals[k] = p.value
			}
		}
		h.Series[name] = vals
	}
	return h
}

type point struct {
	at    time.Time
	value float64
}

// queryRange asks /api/v1/query_range for expr and returns each result series by its
// series label.
func (c *Client) queryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (map[string][]point, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/query_range"
	q := url.Values{}
	q.Set("query", expr)
	q.Set("start", unix(start))
	q.Set("end", unix(end))
	q.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	c.queries.Add(1)
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error repeats the whole URL (the query included): its cause says enough.
		var ue *url.Error
		if errors.As(err, &ue) {
			if ue.Timeout() {
				return nil, fmt.Errorf("no answer within %s", c.http.Timeout)
			}
			return nil, ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("the answer is larger than %d bytes", maxBody)
	}
	var r struct {
		Status, Error, ErrorType string
		Data                     struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Values [][2]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("answered %s, not the API's JSON (is the URL Prometheus's?)", resp.Status)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("answered %s: %s", resp.Status, r.Error)
	}
	out := map[string][]point{}
	for _, s := range r.Data.Result {
		for _, v := range s.Values {
			var ts float64
			var val string
			if json.Unmarshal(v[0], &ts) != nil || json.Unmarshal(v[1], &val) != nil {
				return nil, errors.New("a sample is not [time, \"value\"]")
			}
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, fmt.Errorf("a sample's value %q is not a number", val)
			}
			sec, frac := math.Modf(ts)
			out[s.Metric["series"]] = append(out[s.Metric["series"]], point{time.Unix(int64(sec), int64(frac*1e9)), f})
		}
	}
	return out, nil
}

func unix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Reader is a client's reads of one context's series over a window: what top reads a
// context's history with.
type Reader struct {
	c       *Client
	context string
	window  time.Duration
}

// For is c's reader of context's series over window.
func (c *Client) For(context string, window time.Duration) *Reader {
	return &Reader{c: c, context: context, window: window}
}

// Read is the context's series over the window ending now, DefaultPoints values each.
func (r *Reader) Read(ctx context.Context) History {
	return r.c.Read(ctx, r.context, r.window, DefaultPoints, time.Now())
}

// Queries is how many queries the reader's client has sent.
func (r *Reader) Queries() int64 { return r.c.Queries() }
