package source

import (
	"time"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/top"
)

// Historians are top's readers of the contexts' history: one for each of cs that has a
// prometheus-url, of the exporter's series of its name (label context) over the last
// window, each request under history.DefaultTimeout.
func Historians(cs []*config.Context, window time.Duration) map[string]top.Historian {
	out := map[string]top.Historian{}
	for _, c := range cs {
		raw, _, ok := c.Get(config.KeyPrometheusURL)
		if !ok {
			continue
		}
		// The config file's check parsed it already: an error here cannot be the operator's.
		if cl, err := history.New(raw, history.DefaultTimeout); err == nil {
			out[c.Name] = cl.For(c.Name, window)
		}
	}
	return out
}
