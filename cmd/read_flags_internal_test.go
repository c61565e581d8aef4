package cmd

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/render"
)

// The read commands' flag tests (gh's runF: label/list_test.go): each command line is
// parsed and validated by the real command tree, and the options it would run with are
// taken by app.runF instead of the run, so no database is needed; a bad line is the usage
// error (exit 2) the command gives.

// parseRead parses args (without the binary's name) and returns the options the read
// command would have run with, or the exit code of the error it ended with.
func parseRead[T any](t *testing.T, args ...string) (T, int) {
	t.Helper()
	var got T
	streams := &render.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	a := &app{io: streams.WithSharedErr(), getenv: func(string) string { return "" }, args: args}
	a.env = a.getenv
	ran := false
	a.runF = func(o any) error {
		ran = true
		var ok bool
		if got, ok = o.(T); !ok {
			t.Fatalf("%v: options of type %T, want %T", args, o, got)
		}
		return nil
	}
	root := newRootCmd(a)
	wrapCobraErrors(root)
	root.SetArgs(args)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	_, err := root.ExecuteContextC(context.Background())
	if code := exitCode(context.Background(), err); code != 0 || !ran {
		return got, max(code, 1)
	}
	return got, 0
}

// readFlagCase is one command line and what it parses to (want), or its exit code (code).
type readFlagCase[T any] struct {
	args []string
	want func(T) bool
	code int
}

func checkReadFlags[T any](t *testing.T, cases []readFlagCase[T]) {
	t.Helper()
	for _, tt := range cases {
		got, code := parseRead[T](t, tt.args...)
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d", tt.args, code, tt.code)
			continue
		}
		if tt.want != nil && !tt.want(got) {
			t.Errorf("%v: parsed %+v", tt.args, got)
		}
	}
}

func TestShardsFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[shardsOptions]{
		{args: []string{"shards"}, want: func(o shardsOptions) bool { return o.Limit == 20 && !o.Stuck && o.Pass.Timeout == DefaultPassTimeout }},
		{args: []string{"shards", "--stuck", "--limit", "5", "--scope", "organization", "--fail-if-depth", "100", "--full-pass"},
			want: func(o shardsOptions) bool {
				return o.Stuck && o.Limit == 5 && o.Scope == "organization" && o.FailIfDepth == 100 && o.FullPass
			}},
		{args: []string{"shards", "--limit", "0"}, code: 2},
		{args: []string{"shards", "--fail-if-depth", "-1"}, code: 2},
		{args: []string{"shards", "extra"}, code: 2},
	})
}

func TestDepthFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[depthOptions]{
		{args: []string{"depth"}, want: func(o depthOptions) bool { return !o.Exact && !o.Estimate }},
		{args: []string{"depth", "--exact", "--pass-timeout", "1m"}, want: func(o depthOptions) bool { return o.Exact && o.Pass.Timeout == time.Minute }},
		{args: []string{"depth", "--exact", "--estimate"}, code: 2},
	})
}

func TestInspectShardFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[inspectShardOptions]{
		{args: []string{"inspect", "shard", "organization", "42"}, want: func(o inspectShardOptions) bool { return o.Scope == "organization" && o.id == 42 }},
		{args: []string{"inspect", "shard", "organization", "42", "--all", "--show-payload"}, want: func(o inspectShardOptions) bool { return o.All && o.ShowPayload }},
		{args: []string{"inspect", "shard", "organization", "-1"}, code: 2},
		{args: []string{"inspect", "shard", "organization"}, code: 2},
	})
}

func TestInspectObjectFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[inspectObjectOptions]{
		{args: []string{"inspect", "object", "ORGANIZATION_UPDATE", "7"}, want: func(o inspectObjectOptions) bool {
			return o.Category == "ORGANIZATION_UPDATE" && o.id == 7 && !o.ShardSet
		}},
		{args: []string{"inspect", "object", "ORGANIZATION_UPDATE", "7", "--shard", "0"}, want: func(o inspectObjectOptions) bool { return o.ShardSet && o.Shard == 0 }},
		{args: []string{"inspect", "object", "ORGANIZATION_UPDATE", "x"}, code: 2},
	})
}

func TestInspectCategoryFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[inspectCategoryOptions]{
		{args: []string{"inspect", "category", "ORGANIZATION_UPDATE", "--full-pass"}, want: func(o inspectCategoryOptions) bool {
			return o.Category == "ORGANIZATION_UPDATE" && o.FullPass
		}},
		{args: []string{"inspect", "category"}, code: 2},
	})
}

func TestInspectMessageFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[inspectMessageOptions]{
		{args: []string{"inspect", "message", "123"}, want: func(o inspectMessageOptions) bool { return o.id == 123 }},
		{args: []string{"inspect", "message", "-5"}, code: 2},
	})
}

func TestDoctorFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[doctorOptions]{
		{args: []string{"doctor"}, want: func(o doctorOptions) bool { return len(o.Checks) == 0 && o.Sample == 0 }},
		{args: []string{"doctor", "--check", "stuck", "--check", "xmin"}, want: func(o doctorOptions) bool {
			return reflect.DeepEqual(o.Checks, []string{"stuck", "xmin"})
		}},
		{args: []string{"doctor", "--check", "nosuchcheck"}, code: 2},
	})
}

func TestKillswitchListFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[killswitchListOptions]{
		{args: []string{"killswitch", "list"}, want: func(o killswitchListOptions) bool { return len(o.overrides) == 0 }},
		{args: []string{"killswitch", "list", "--coded", "sentry_organization=4"}, want: func(o killswitchListOptions) bool {
			return o.overrides["sentry_organization"] == 4
		}},
		{args: []string{"killswitch", "list", "--coded", "nonsense"}, code: 2},
	})
}

func TestKillswitchCheckFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[killswitchCheckOptions]{
		{args: []string{"killswitch", "check", "organization", "42"}, want: func(o killswitchCheckOptions) bool {
			return o.Scope == "organization" && reflect.DeepEqual(o.ids, []int64{42})
		}},
		{args: []string{"killswitch", "check", "organization", "x"}, code: 2},
		{args: []string{"killswitch", "check", "nosuchscope", "42"}, code: 2},
	})
}

func TestMailboxesFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[mailboxesOptions]{
		{args: []string{"mailboxes", "--provider", "github", "--limit", "5"}, want: func(o mailboxesOptions) bool { return o.Provider == "github" && o.Limit == 5 }},
		{args: []string{"mailboxes", "--limit", "0"}, code: 2},
	})
}

func TestInspectMailboxFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[inspectMailboxOptions]{
		{args: []string{"inspect", "mailbox", "github:1"}, want: func(o inspectMailboxOptions) bool { return o.Name == "github:1" && !o.ShowSecrets }},
		{args: []string{"inspect", "mailbox", "github:1", "--limit", "0"}, code: 2},
	})
}

func TestBackfillStatusFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[backfillStatusOptions]{
		{args: []string{"backfill", "status"}, want: func(o backfillStatusOptions) bool { return len(o.Tables) == 0 && !o.ExitStatus }},
		{args: []string{"backfill", "status", "--exit-status", "--coded", "sentry_organization=2"}, want: func(o backfillStatusOptions) bool {
			return o.ExitStatus && o.overrides["sentry_organization"] == 2
		}},
		{args: []string{"backfill", "status", "--coded", "nonsense"}, code: 2},
	})
}

func TestVerifyFlags(t *testing.T) {
	t.Parallel()
	checkReadFlags(t, []readFlagCase[verifyOptions]{
		{args: []string{"verify"}, want: func(o verifyOptions) bool { return len(o.Pairs) == 0 && len(o.pairs) > 0 }},
		{args: []string{"verify", "organization", "--fail-on-drift"}, want: func(o verifyOptions) bool { return o.FailOnDrift && len(o.pairs) == 1 }},
		{args: []string{"verify", "nosuchpair"}, code: 2},
	})
}
