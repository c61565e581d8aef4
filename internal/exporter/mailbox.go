package exporter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// The webhook payload mailboxes' families (hybridcloud_webhookpayload, control silo;
// docs/mailboxes.md), collected by the expensive tier where the table exists. Labels are
// provider and cell, never the mailbox name (one per integration: unbounded); the most
// harmful mailboxes get a rank 1..TopMailboxes instead, as the top shards do.
var (
	labelsMailbox     = []string{"context", "provider", "cell"}
	labelsMailboxRank = []string{"context", "rank"}

	descWebhookPayloads = desc("webhook_payloads",
		"Webhook payloads waiting in hybridcloud_webhookpayload per provider and cell, counted (expensive tier).", labelsMailbox)
	descWebhookMailboxes = desc("webhook_mailboxes",
		"Webhook mailboxes per provider and their head's cell (expensive tier).", labelsMailbox)
	descWebhookBlocked = desc("webhook_mailboxes_blocked",
		"Webhook mailboxes blocked behind a failed head, of providers that do not skip failures (expensive tier).", labelsMailbox)
	descWebhookOldest = desc("webhook_oldest_payload_age_seconds",
		"Age of the oldest webhook payload (the oldest mailbox head) per provider and cell; Sentry drops a payload at 3 days (expensive tier).", labelsMailbox)
	descWebhookLongestBlocked = desc("webhook_longest_blocked_seconds",
		"How long the longest-blocked mailbox has waited behind its head (the head's age), 0 when none is blocked (expensive tier).", labelsMailbox)
	descWebhookTopPayloads = desc("webhook_top_mailbox_payloads",
		"Payloads of the rank-th most harmful mailbox (blocked longest first, as outboxctl mailboxes lists them): counted up to 10,000, estimated past (expensive tier).", labelsMailboxRank)
	descWebhookTopAge = desc("webhook_top_mailbox_head_age_seconds",
		"Age of the rank-th most harmful mailbox's head (expensive tier).", labelsMailboxRank)
	descWebhookTopBlocked = desc("webhook_top_mailbox_blocked",
		"1 when the rank-th most harmful mailbox is blocked (expensive tier).", labelsMailboxRank)

	mailboxDescs = []*prometheus.Desc{descWebhookPayloads, descWebhookMailboxes, descWebhookBlocked, descWebhookOldest,
		descWebhookLongestBlocked, descWebhookTopPayloads, descWebhookTopAge, descWebhookTopBlocked}
)

// TopMailboxes is how many of the most harmful mailboxes get a rank label.
const TopMailboxes = 10

// The label caps of the mailbox families: providers are Sentry's integrations (a few
// dozen), cells a few; past the cap a value's series are summed under "other" (the
// database is not trusted to keep them few).
const (
	maxProviders = 30
	maxCells     = 50
)

// collectMailboxes reads the mailbox families on conn, in a read-only snapshot of its own;
// nothing when the table is not here (a cell's database).
func (src *Source) collectMailboxes(ctx context.Context, conn *db.Conn) ([]sample, error) {
	var out []sample
	t := query.MailboxTarget(src.Target.Schema)
	err := outbox.On(ctx, conn, t, outbox.Options{Deployment: src.Deployment}, func(s *outbox.Snapshot) error {
		tx := s.Tx()
		cat, err := mailbox.ReadCatalog(ctx, tx, t)
		var none *mailbox.NoTableError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return err
		}
		skip, err := mailbox.ReadSkipProviders(ctx, tx, src.Target.Schema, s.Schema)
		if err != nil {
			return err
		}
		depth, err := mailbox.ReadDepth(ctx, tx, t, cat, false)
		if err != nil {
			return err
		}
		heads, err := query.All[query.MailboxHeadsSummaryRow](ctx, tx, query.MailboxHeadsSummary(t, skip.Providers))
		if err != nil {
			return db.Classify(err, "mailbox-heads-summary")
		}
		top, err := mailbox.ReadListing(ctx, tx, t, cat, skip, query.MailboxFilter{}, TopMailboxes)
		if err != nil {
			return err
		}
		out = src.mailboxSamples(depth, heads, top)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mailboxes: %w", err)
	}
	return out, nil
}

// mailboxKey is a (provider, cell) pair's label values, capped.
type mailboxKey struct{ provider, cell string }

// mailboxSamples turns the reads into samples, providers and cells past their caps summed
// (ages: the largest) under "other".
func (src *Source) mailboxSamples(depth []query.MailboxDepthRow, heads []query.MailboxHeadsSummaryRow, top *mailbox.Listing) []sample {
	weight := map[string]map[string]int64{"provider": {}, "cell": {}}
	for _, r := range depth {
		weight["provider"][deref(r.Provider)] += deref64(r.Depth)
		weight["cell"][deref(r.Cell)] += deref64(r.Depth)
	}
	for _, r := range heads {
		weight["provider"][deref(r.Provider)] += 0
		weight["cell"][deref(r.Cell)] += 0
	}
	keepP, keepC := topValues(weight["provider"], maxProviders), topValues(weight["cell"], maxCells)
	key := func(p, c *string) mailboxKey {
		k := mailboxKey{deref(p), deref(c)}
		if !keepP[k.provider] {
			k.provider = "other"
		}
		if !keepC[k.cell] {
			k.cell = "other"
		}
		return k
	}
	sums := map[*prometheus.Desc]map[mailboxKey]float64{}
	add := func(d *prometheus.Desc, k mailboxKey, v float64, maxOf bool) {
		if sums[d] == nil {
			sums[d] = map[mailboxKey]float64{}
		}
		if cur, ok := sums[d][k]; ok && maxOf {
			sums[d][k] = max(cur, v)
			return
		}
		sums[d][k] += v
	}
	for _, r := range depth {
		add(descWebhookPayloads, key(r.Provider, r.Cell), float64(deref64(r.Depth)), false)
	}
	for _, r := range heads {
		k := key(r.Provider, r.Cell)
		add(descWebhookMailboxes, k, float64(r.Mailboxes), false)
		add(descWebhookBlocked, k, float64(r.Blocked), false)
		add(descWebhookOldest, k, max(r.OldestAgeSeconds, 0), true)
		add(descWebhookLongestBlocked, k, max(r.LongestBlockedSeconds, 0), true)
	}
	var out []sample
	for _, d := range mailboxDescs[:5] {
		keys := make([]mailboxKey, 0, len(sums[d]))
		for k := range sums[d] {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keys[i].provider < keys[j].provider || (keys[i].provider == keys[j].provider && keys[i].cell < keys[j].cell)
		})
		for _, k := range keys {
			out = append(out, sample{d, sums[d][k], []string{src.Name, k.provider, k.cell}})
		}
	}
	for i, r := range top.Rows {
		labels := []string{src.Name, strconv.Itoa(i + 1)}
		age := max(top.ObservedAt.Sub(r.OldestAdded).Seconds(), 0)
		out = append(out, sample{descWebhookTopPayloads, float64(r.Depth), labels},
			sample{descWebhookTopAge, age, labels}, sample{descWebhookTopBlocked, boolValue(r.State.Text == "blocked"), labels})
	}
	return out
}

// topValues keeps the n values of the largest weight (ties by value), the rest to fold.
func topValues(weight map[string]int64, n int) map[string]bool {
	vals := make([]string, 0, len(weight))
	for v := range weight {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool {
		if weight[vals[i]] != weight[vals[j]] {
			return weight[vals[i]] > weight[vals[j]]
		}
		return vals[i] < vals[j]
	})
	keep := map[string]bool{}
	for i, v := range vals {
		if i == n {
			break
		}
		keep[v] = true
	}
	return keep
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func deref64(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
