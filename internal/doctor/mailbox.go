package doctor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/mailbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// CheckMailboxes looks at the control silo's webhook payload mailboxes
// (hybridcloud_webhookpayload, reference §10.4): mailboxes blocked behind a failing head,
// heads Sentry is about to drop undelivered (MAX_DELIVERY_AGE, 3 days), mailboxes of tens
// of thousands of payloads (INC-2324's shape), and the providers whose failures Sentry
// skips (a receiver outage loses their payloads rather than blocking them). On a database
// without the table (a cell's) it reports that and nothing else.
const CheckMailboxes = "mailboxes"

// The mailbox check's default thresholds: doctor's --mailbox-blocked, --mailbox-near-drop
// and --mailbox-large (Config; docs/mailboxes.md).
const (
	// MailboxBlockedWarn: a mailbox blocked behind its head for longer is a warning;
	// MailboxBlockedCrit, critical.
	MailboxBlockedWarn = 30 * time.Minute
	MailboxBlockedCrit = 6 * time.Hour
	// MailboxDropMargin: a head this close to MAX_DELIVERY_AGE is critical, Sentry is about
	// to drop it undelivered.
	MailboxDropMargin = 12 * time.Hour
	// MailboxLarge: a mailbox of at least this many payloads is a warning (INC-2324 had
	// millions); also the listing's count cap, so a larger one reads "at least".
	MailboxLarge = 10_000
	// mailboxSample is how many mailboxes, most harmful first, the check reads the heads
	// and depths of.
	mailboxSample = 100
)

// mailboxStatements are the check's statements, for --print-sql (the catalog's estimate and
// the options are read first in a run: printed, they are NULL and Sentry's default).
func mailboxStatements(schema string, deployment query.Deployment, cfg Config) query.Script {
	t := query.MailboxTarget(schema)
	return query.Script{query.MailboxCatalog(t),
		query.OptionValues(schema, mailboxOptionsTable(query.Schema{Deployment: deployment}), []string{mailbox.SkipOption}),
		query.Mailboxes(t, query.MailboxFilter{}, mailbox.DefaultSkipProviders, mailboxSample, cfg.MailboxLarge, nil),
		query.MailboxCommon(t, nil, cfg.MailboxLarge)}
}

// mailboxOptionsTable is the options table Sentry's control silo reads, for printed SQL.
func mailboxOptionsTable(sch query.Schema) string {
	if sch.Deployment == query.DeploymentMonolith {
		return query.OptionTable
	}
	return query.ControlOptionTable
}

func checkMailboxes(ctx context.Context, env *Env) ([]Finding, error) {
	t := query.MailboxTarget(env.SchemaName)
	cat, err := mailbox.ReadCatalog(ctx, env.Tx, t)
	var none *mailbox.NoTableError
	if errors.As(err, &none) {
		return []Finding{{Check: CheckMailboxes, Severity: OK, Target: query.MailboxTable,
			Summary: "no webhook payload mailboxes here (hybridcloud_webhookpayload is the control silo's table)"}}, nil
	}
	if err != nil {
		return nil, err
	}
	skip, err := mailbox.ReadSkipProviders(ctx, env.Tx, env.SchemaName, env.Schema)
	if err != nil {
		return nil, err
	}
	large := env.Config.MailboxLarge
	l, err := mailbox.ReadListingCapped(ctx, env.Tx, t, cat, skip, query.MailboxFilter{}, mailboxSample, large)
	if err != nil {
		return nil, err
	}
	common, err := query.All[query.MailboxCommonRow](ctx, env.Tx, query.MailboxCommon(t, cat.EstimatedRows, large))
	if err != nil {
		return nil, err
	}
	now := env.Now
	var out []Finding
	deep := map[string]int64{}
	failingSkip := map[string]int{}
	for _, r := range l.Rows {
		if f, ok := env.blockedMailbox(r, now); ok {
			out = append(out, f)
		} else if f, ok := env.droppingMailbox(r, now); ok {
			out = append(out, f)
		}
		if r.Depth > large || (r.Depth == large && r.DepthIs == mailbox.DepthExact) {
			deep[r.Mailbox] = r.Depth
		}
		if r.SkipsFailures && r.HeadAttempts > 0 && r.Provider != nil {
			failingSkip[*r.Provider]++
		}
	}
	for _, c := range common {
		deep[c.MailboxName] = max(deep[c.MailboxName], c.EstimatedDepth)
	}
	out = append(out, env.largeMailboxes(deep)...)
	out = append(out, env.skipProviders(skip, failingSkip))
	if len(out) == 1 && out[0].Severity == OK {
		out[0].Summary = fmt.Sprintf("%d mailbox(es), none blocked past %s, near Sentry's 3-day drop or of %d payloads or more; %s",
			l.Mailboxes, dur(env.Config.MailboxBlocked.Seconds()), large, out[0].Summary)
	}
	return out, nil
}

// mailboxNext is the outboxctl command line args on the invocation's database.
func (env *Env) mailboxNext(args ...string) string {
	return env.Prefix + " " + textsafe.Command(args...)
}

// blockedMailbox is the finding of a mailbox blocked behind a failing head for longer than
// Config.MailboxBlocked (critical past MailboxBlockedCrit, or its blocked time's sixfold
// when that is longer). The head's date is when it was received, and Sentry tries a payload
// as it arrives, so the mailbox has been blocked about that long.
func (env *Env) blockedMailbox(r mailbox.ListRow, now time.Time) (Finding, bool) {
	age := now.Sub(r.OldestAdded)
	if r.State.Text != "blocked" || age < env.Config.MailboxBlocked {
		return Finding{}, false
	}
	sev := Warn
	if age >= max(MailboxBlockedCrit, UnclaimedCritFactor*env.Config.MailboxBlocked) || r.DropsAt.Sub(now) <= env.Config.MailboxNearDrop {
		sev = Crit
	}
	name := Clean(r.Mailbox)
	return Finding{Check: CheckMailboxes, Severity: sev, Target: name, Short: "mailbox blocked behind its head",
		Summary: fmt.Sprintf("mailbox %s has been blocked behind head %d for %s (%d attempt(s), next %s), the mailbox holding %s %d payload(s); Sentry drops the head undelivered at %s",
			name, r.HeadID, dur(age.Seconds()), r.HeadAttempts, time.Time(r.HeadNextAttempt).UTC().Format(time.RFC3339), r.DepthIs, r.Depth, r.DropsAt.UTC().Format(time.RFC3339)),
		Evidence: mailboxEvidence(r, age),
		Next:     env.mailboxNext("inspect", "mailbox", r.Mailbox),
		Then:     []string{env.mailboxNext("reschedule", "--mailbox", r.Mailbox, "--reason", "receiver fixed", "--dry-run")}}, true
}

// droppingMailbox is the finding of a mailbox whose head Sentry drops undelivered within
// Config.MailboxNearDrop (MAX_DELIVERY_AGE after it was received), blocked or not.
func (env *Env) droppingMailbox(r mailbox.ListRow, now time.Time) (Finding, bool) {
	left := r.DropsAt.Sub(now)
	if left > env.Config.MailboxNearDrop {
		return Finding{}, false
	}
	name := Clean(r.Mailbox)
	when := "in " + dur(left.Seconds())
	if left <= 0 {
		when = "now (it is past MAX_DELIVERY_AGE)"
	}
	return Finding{Check: CheckMailboxes, Severity: Crit, Target: name, Short: "payloads about to be dropped",
		Summary: fmt.Sprintf("mailbox %s's oldest payload (head %d) is %s old: Sentry drops it undelivered %s, and each payload behind it as it reaches 3 days (%s %d in the mailbox)",
			name, r.HeadID, dur(now.Sub(r.OldestAdded).Seconds()), when, r.DepthIs, r.Depth),
		Evidence: mailboxEvidence(r, now.Sub(r.OldestAdded)),
		Next:     env.mailboxNext("inspect", "mailbox", r.Mailbox)}, true
}

func mailboxEvidence(r mailbox.ListRow, age time.Duration) Evidence {
	return Evidence{{"mailbox", Clean(r.Mailbox)}, {"provider", cleanPtr(r.Provider)}, {"cell", cleanPtr(r.Cell)},
		{"head_id", r.HeadID}, {"head_attempts", r.HeadAttempts}, {"head_age_seconds", seconds(age)},
		{"drops_at", r.DropsAt}, {"depth", r.Depth}, {"depth_is", r.DepthIs}}
}

func cleanPtr(s *string) any {
	if s == nil {
		return nil
	}
	return Clean(*s)
}

// largeMailboxes are the findings of mailboxes of Config.MailboxLarge payloads or more, deepest
// first, at most Config.Limit.
func (env *Env) largeMailboxes(large map[string]int64) []Finding {
	names := make([]string, 0, len(large))
	for n := range large {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if large[names[i]] != large[names[j]] {
			return large[names[i]] > large[names[j]]
		}
		return names[i] < names[j]
	})
	var out []Finding
	for i, n := range names {
		if i == env.Config.Limit {
			break
		}
		name := Clean(n)
		out = append(out, Finding{Check: CheckMailboxes, Severity: Warn, Target: name, Short: "large mailbox",
			Summary: fmt.Sprintf("mailbox %s holds about %d payloads or more (INC-2324's shape: one integration's webhooks pile up faster than Sentry drains them, %d a run)",
				name, large[n], mailbox.MaxMailboxDrain),
			Evidence: Evidence{{"mailbox", name}, {"depth_at_least_or_estimated", large[n]}},
			Next:     env.mailboxNext("inspect", "mailbox", n),
			Then:     []string{env.mailboxNext("--table", query.MailboxTable, "depth")}})
	}
	return out
}

// skipProviders is the finding of the providers whose failing payloads Sentry skips: a
// warning when some of their heads are failing (their payloads are being dropped, not
// held), else a note of the list.
func (env *Env) skipProviders(skip mailbox.SkipProviders, failing map[string]int) Finding {
	list := make([]string, len(skip.Providers))
	for i, p := range skip.Providers {
		list[i] = Clean(p)
	}
	f := Finding{Check: CheckMailboxes, Severity: OK, Target: mailbox.SkipOption, Short: "providers that skip failures",
		Summary:  fmt.Sprintf("providers that skip a failing payload instead of blocking: %s (%s)", strings.Join(list, ", "), skip.Source),
		Evidence: Evidence{{"providers", strings.Join(list, ",")}, {"source", skip.Source}}}
	if len(failing) == 0 {
		return f
	}
	provs := make([]string, 0, len(failing))
	for p := range failing {
		provs = append(provs, p)
	}
	sort.Strings(provs)
	f.Severity = Warn
	n := 0
	for _, c := range failing {
		n += c
	}
	f.Summary = fmt.Sprintf("%d mailbox head(s) of %s, providers that skip failures, are failing: Sentry skips such a payload rather than blocking its mailbox (what becomes of it is UNVERIFIED), so a receiver outage shows no blocked mailbox; %s",
		n, Clean(strings.Join(provs, ", ")), f.Summary)
	f.Evidence = append(f.Evidence, KV{"failing_heads", n})
	f.Next = env.mailboxNext("mailboxes", "--provider", provs[0])
	return f
}
