package cmd

import (
	"context"
	"reflect"
	"testing"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// The repairs' flag tests (gh's pattern): each command is built with its run function
// replaced (runF), parsed from a command line without a database, and what the run would
// have been given is checked; a bad command line is a usage error (exit 2) before any run.

// flagApp is an app on test streams, no database, the cell outbox.
func flagApp() *app {
	streams, _, _ := render.Test()
	return &app{io: streams, getenv: streams.Getenv, g: globalOptions{Silo: "cell", Deployment: "auto", Output: "json"}}
}

// execute parses args into c (its cobra errors usage errors, as under the root) and runs it.
func execute(c *cobra.Command, args ...string) error {
	wrapCobraErrors(c)
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs(args)
	c.SetContext(context.Background())
	return c.Execute()
}

func TestNewSkipCmdFlags(t *testing.T) {
	t.Parallel()
	type got struct {
		o   skipOptions
		ids []int64
	}
	for _, tc := range []struct {
		args []string
		want *got // nil: a usage error, the run never called
	}{
		{[]string{"123", "--reason", "INC-5", "--archive", "a.jsonl", "--keep-backoff", "--yes"},
			&got{skipOptions{repairOptions: repairOptions{Yes: true, Reason: "INC-5", Archive: "a.jsonl", KeepBackoff: true}, messageArg: messageArg{ID: "123", id: 123}}, []int64{123}}},
		{[]string{"7", "9", "8"}, &got{skipOptions{messageArg: messageArg{ID: "7", id: 7}}, []int64{7, 9, 8}}},
		{[]string{"7", "7"}, nil},          // a group named twice
		{[]string{"-5"}, nil},              // not an id
		{[]string{"123", "--stuck"}, nil},  // MESSAGE_ID and selector flags
		{[]string{"123", "--reason"}, nil}, // --reason without its value
	} {
		var ran *got
		c := newSkipCmd(flagApp(), func(_ context.Context, _ factory, o skipOptions, t query.Target, ids []int64) error {
			o.bulk = bulkOptions{}
			ran = &got{o, ids}
			if t.Silo != query.SiloCell {
				return usageErrorf("", "target %v", t)
			}
			return nil
		})
		err := execute(c, tc.args...)
		if tc.want == nil {
			if err == nil || exitCode(context.Background(), err) != ExitUsage || ran != nil {
				t.Errorf("skip %v: %v (exit %d), ran %v: want a usage error and no run", tc.args, err, exitCode(context.Background(), err), ran)
			}
			continue
		}
		if err != nil || ran == nil || !reflect.DeepEqual(*ran, *tc.want) {
			t.Errorf("skip %v: %v, ran %+v, want %+v", tc.args, err, ran, tc.want)
		}
	}
}

func TestNewCompactCmdFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		wantOK bool
		reason string
		keep   bool
		id     int64
	}{
		{[]string{"organization", "42", "--reason", "INC-4", "--keep-backoff", "--yes"}, true, "INC-4", true, 42},
		{[]string{"organization", "0"}, true, "", false, 0},
		{[]string{"organization", "-1"}, false, "", false, 0},
		{[]string{"nosuchscope", "1"}, false, "", false, 0},
		{[]string{"organization"}, false, "", false, 0},
	} {
		var ran bool
		var o compactOptions
		var k query.ShardKey
		c := newCompactCmd(flagApp(), func(_ context.Context, _ factory, got compactOptions, _ query.Target, key query.ShardKey) error {
			ran, o, k = true, got, key
			return nil
		})
		err := execute(c, tc.args...)
		if !tc.wantOK {
			if err == nil || exitCode(context.Background(), err) != ExitUsage || ran {
				t.Errorf("compact %v: %v (exit %d), ran %v: want a usage error and no run", tc.args, err, exitCode(context.Background(), err), ran)
			}
			continue
		}
		if err != nil || !ran || o.Reason != tc.reason || o.KeepBackoff != tc.keep || k.ID != tc.id || k.Scope.Name != "ORGANIZATION_SCOPE" {
			t.Errorf("compact %v: %v, ran %v with %+v on %+v", tc.args, err, ran, o, k)
		}
	}
}

func TestNewRescheduleCmdFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		wantOK bool
		mode   query.RescheduleMode
	}{
		{[]string{"organization", "42", "--reason", "INC-3", "--yes"}, true, query.RescheduleAllRows},
		{[]string{"organization", "42", "--group-heads"}, true, query.RescheduleGroupHeads},
		{[]string{"organization", "x"}, false, ""},
		{[]string{"organization", "42", "--at-cap"}, false, ""},
	} {
		var ran bool
		var o rescheduleOptions
		c := newRescheduleCmd(flagApp(), func(_ context.Context, _ factory, got rescheduleOptions, _ query.Target, k query.ShardKey) error {
			ran, o = true, got
			if k.ID != 42 {
				return usageErrorf("", "shard %d", k.ID)
			}
			return nil
		})
		err := execute(c, tc.args...)
		if !tc.wantOK {
			if err == nil || exitCode(context.Background(), err) != ExitUsage || ran {
				t.Errorf("reschedule %v: %v (exit %d), ran %v: want a usage error and no run", tc.args, err, exitCode(context.Background(), err), ran)
			}
			continue
		}
		if err != nil || !ran || o.mode() != tc.mode {
			t.Errorf("reschedule %v: %v, ran %v with %+v", tc.args, err, ran, o)
		}
	}
}
