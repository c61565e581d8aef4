package exporter

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/outboxctl/outboxctl/internal/db"
)

// Handler serves /metrics (the cached values, the Go and process collectors beside them),
// /healthz (200 as soon as the server listens) and /readyz: ready means "has data to
// serve", 200 once both tiers of every context have run once and at least one collection
// succeeded, 503 before and while every collection has failed (a scrape would get only
// outboxctl_up 0 and error counts).
func (e *Exporter) Handler() http.Handler {
	reg := e.Registry(true)
	mux := http.NewServeMux()
	// At most MaxScrapes scrapes at once (node_exporter's --web.max-requests): the others
	// get 503 at once rather than queueing behind a slow client.
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, MaxRequestsInFlight: e.opts.MaxScrapes}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		select {
		case <-e.ready:
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("collecting: the first collection of every tier has not finished\n"))
			return
		}
		if !e.HasData() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("no data: every collection so far has failed (outboxctl_collect_errors_total; the exporter's stderr says why)\n"))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>outboxctl exporter</title></head><body><h1>outboxctl exporter</h1>` +
			`<p><a href="/metrics">/metrics</a> <a href="/healthz">/healthz</a> <a href="/readyz">/readyz</a></p></body></html>` + "\n"))
	})
	return mux
}

// Serve serves Handler on ln until ctx ends, then shuts the server down (waiting up to 5 s
// for scrapes in flight). Every client is bounded, as Prometheus's exporter toolkit bounds
// them: at most MaxConnections open (the one quiet the longest is closed to let another
// in), a request's header within 10 s and its whole within ReadTimeout, the answer written
// within WriteTimeout, an idle keep-alive connection closed after IdleTimeout. A client that
// sends requests and never reads the answers costs at most a slot for WriteTimeout.
func (e *Exporter) Serve(ctx context.Context, ln net.Listener) error {
	limited := newLimitListener(ln, e.opts.MaxConnections)
	e.listener.Store(limited)
	srv := &http.Server{
		Handler:           e.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       e.opts.ReadTimeout,
		WriteTimeout:      e.opts.WriteTimeout,
		IdleTimeout:       e.opts.IdleTimeout,
		MaxHeaderBytes:    16 << 10,
		ConnState:         limited.connState,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(limited) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shut)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// RunServing collects in the background (Run) and serves on ln (Serve) until ctx ends, a
// clean stop. The first collection's failures, all but a stop's own cancellation, go to
// warn once it ends; everything started is joined before it returns, so nothing is warned
// after (a test or an in-process caller reads the output then).
func (e *Exporter) RunServing(ctx context.Context, ln net.Listener, warn func(error)) error {
	run, stop := context.WithCancel(ctx)
	defer stop()
	e.Run(run)
	told := make(chan struct{})
	go func() {
		defer close(told)
		select {
		case <-e.Ready():
		case <-run.Done():
		}
		// Ready may have closed as the run ended: the failures are told whenever it did (a
		// select between the two would pick at random).
		select {
		case <-e.Ready():
			for _, err := range e.Errors() {
				if !errors.Is(err, context.Canceled) {
					warn(err)
				}
			}
		default:
		}
	}()
	err := e.Serve(run, ln)
	stop()
	e.Wait()
	<-told
	return err
}

// Failures are the contexts a collection's error (CollectOnce's, joined) failed, and its
// errors' messages with the DSNs' passwords redacted: outboxctl metrics' verdict is partial
// when some contexts failed, a failure when all did.
func Failures(err error) (contexts map[string]bool, msgs []string) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	contexts = map[string]bool{}
	for _, e := range errs {
		var ce *CollectError
		if errors.As(e, &ce) {
			contexts[ce.Context] = true
		}
		msgs = append(msgs, db.RedactDSN(e.Error()))
	}
	return contexts, msgs
}

// Text is the families in the text exposition format (no Go or process collectors), for
// outboxctl metrics' stdout.
func (e *Exporter) Text() ([]byte, error) {
	mfs, err := e.Registry(false).Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// WriteTextfile writes the families to path for node_exporter's textfile collector,
// atomically: a temporary file beside it, then a rename, so the collector never reads half
// a file.
func (e *Exporter) WriteTextfile(path string) error {
	return prometheus.WriteToTextfile(path, e.Registry(false))
}
