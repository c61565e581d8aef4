package exporter

import (
	"fmt"
	"testing"

	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// TestMailboxLabelsCapped: past 30 providers (by payloads) a provider's series are summed
// under "other", so a database holding thousands of provider names makes 31 series a family.
func TestMailboxLabelsCapped(t *testing.T) {
	t.Parallel()
	var depth []query.MailboxDepthRow
	var heads []query.MailboxHeadsSummaryRow
	cell := "us"
	for i := range 40 {
		p, n := fmt.Sprintf("p%02d", i), int64(100-i)
		depth = append(depth, query.MailboxDepthRow{Provider: &p, Cell: &cell, Depth: &n})
		heads = append(heads, query.MailboxHeadsSummaryRow{Provider: &p, Cell: &cell, Mailboxes: 1, Blocked: 1, OldestAgeSeconds: float64(i)})
	}
	src := &Source{Name: "c"}
	out := src.mailboxSamples(depth, heads, &mailbox.Listing{})
	series := map[string]float64{}
	for _, s := range out {
		if s.desc == descWebhookPayloads || s.desc == descWebhookBlocked || s.desc == descWebhookOldest {
			series[fmt.Sprint(s.desc == descWebhookPayloads, s.desc == descWebhookOldest, s.labels)] = s.value
		}
	}
	if len(series) != 3*31 {
		t.Fatalf("%d series, want 93 (3 families of 30 providers and other)", len(series))
	}
	// other holds p30..p39: payloads 70+…+61, 10 blocked, the oldest age 39.
	if got := series[fmt.Sprint(true, false, []string{"c", "other", "us"})]; got != 655 {
		t.Errorf("other's payloads = %v, want 655", got)
	}
	if got := series[fmt.Sprint(false, false, []string{"c", "other", "us"})]; got != 10 {
		t.Errorf("other's blocked = %v, want 10", got)
	}
	if got := series[fmt.Sprint(false, true, []string{"c", "other", "us"})]; got != 39 {
		t.Errorf("other's oldest age = %v, want 39 (the largest, not a sum)", got)
	}
}
