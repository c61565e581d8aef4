package cmd

import (
	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/history"
	"github.com/outboxctl/outboxctl/internal/top"
)

// topHistory are top's readers of the contexts' history: one for each context read that
// has a prometheus-url, of the exporter's series of its name (label context) over the last
// o.History, each request under history.DefaultTimeout. None without a context.
func (a *app) topHistory(o topOptions) map[string]top.Historian {
	cs := a.fan
	if len(cs) == 0 && a.usedContext != nil {
		cs = []*config.Context{a.usedContext}
	}
	out := map[string]top.Historian{}
	for _, c := range cs {
		raw, _, ok := c.Get(config.KeyPrometheusURL)
		if !ok {
			continue
		}
		// The config file's check parsed it already: an error here cannot be the operator's.
		if cl, err := history.New(raw, history.DefaultTimeout); err == nil {
			out[c.Name] = cl.For(c.Name, o.History)
		}
	}
	return out
}
