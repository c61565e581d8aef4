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
// /healthz (200 as soon as the server listens) and /readyz (200 once both tiers of every
// context have run once, 503 before).
func (e *Exporter) Handler() http.Handler {
	reg := e.Registry(true)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		select {
		case <-e.ready:
			_, _ = w.Write([]byte("ready\n"))
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("collecting: the first collection of every tier has not finished\n"))
		}
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
// for scrapes in flight).
func (e *Exporter) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
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
