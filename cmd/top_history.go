package cmd

import (
	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/top"
	"github.com/outboxctl/outboxctl/internal/top/source"
)

// topHistory are top's readers of the history of the contexts read (source.Historians):
// the selected ones, or the invocation's; none without a context.
func (a *app) topHistory(o topOptions) map[string]top.Historian {
	cs := a.fan
	if len(cs) == 0 && a.usedContext != nil {
		cs = []*config.Context{a.usedContext}
	}
	return source.Historians(cs, o.History)
}
