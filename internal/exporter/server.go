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
