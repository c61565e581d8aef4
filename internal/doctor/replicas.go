package doctor

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// CheckReplicas samples organization -> organizationmapping, the replica self-hosted
// operators find empty after an upgrade (getsentry/self-hosted#2582): cheap on every run
// (the 100 oldest and 100 newest organizations, two probes of the primary key, and as many
// of the mapping's index), it points to verify, which compares every pair in full.
const CheckReplicas = "replicas"

// ReplicaSample is how many of the oldest and of the newest organizations the check looks
// up.
const ReplicaSample = 100

func replicasTables(schema string) query.ReplicaTables {
	p, _ := replica.Lookup(replica.OrganizationPair)
	return query.ReplicaTables{Source: query.QualifiedTable(schema, p.Source), Replica: query.QualifiedTable(schema, p.Replica)}
}

func replicasStatements(schema string) query.Script {
	return query.Script{query.ReplicaSample(replicasTables(schema), ReplicaSample)}
}

func checkReplicas(ctx context.Context, env *Env) ([]Finding, error) {
	next := env.Prefix + " verify organization"
	schema, err := outbox.ReadCatalog(ctx, env.Tx, env.SchemaName, []string{"sentry_organization", "sentry_organizationmapping"})
	if err != nil {
		return nil, err
	}
	if !schema.Table("sentry_organization").Present || !schema.Table("sentry_organizationmapping").Present {
		return []Finding{{Check: CheckReplicas, Severity: OK,
			// No next: the command needs the operator's two context names, and a printed next
			// must run as printed (a placeholder would exit 2).
			Summary:  "sentry_organization and sentry_organizationmapping are not both here (a split silo): verify compares them across two contexts (outboxctl --context <cell>,<control> verify)",
			Evidence: Evidence{{"sampled", 0}}}}, nil
	}
	rows, err := query.All[query.ReplicaSampleRow](ctx, env.Tx, replicasStatements(env.SchemaName)[0])
	if err != nil || len(rows) != 1 {
		return nil, fmt.Errorf("replica-sample: %d rows: %w", len(rows), err)
	}
	r := rows[0]
	f := Finding{Check: CheckReplicas, Severity: OK, Evidence: Evidence{{"sampled", r.Sampled}, {"missing", r.Missing}}, Next: next}
	switch {
	case r.Sampled > 0 && r.Missing == r.Sampled:
		f.Severity, f.Summary = Crit, fmt.Sprintf("none of the %d organizations sampled (the oldest and the newest) has an organization mapping: SSO and organization access break (replicas out of sync after an upgrade)", r.Sampled)
	case r.Missing > 0:
		f.Severity, f.Summary = Warn, fmt.Sprintf("%d of the %d organizations sampled (the oldest and the newest) have no organization mapping", r.Missing, r.Sampled)
	default:
		f.Summary = fmt.Sprintf("the %d organizations sampled (the oldest and the newest) all have an organization mapping (a sample: verify checks every pair)", r.Sampled)
	}
	return []Finding{f}, nil
}
