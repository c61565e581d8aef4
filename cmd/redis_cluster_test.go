package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestBackfillStatusRedisCluster starts a real three-node Redis Cluster on loopback ports of
// its own and reads a backfill cursor through --redis-cluster.
func TestBackfillStatusRedisCluster(t *testing.T) {
	t.Parallel()
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server and redis-cli are needed for the cluster test")
		}
		t.Skip("redis-server or redis-cli not installed")
	}
	base := 17100 + os.Getpid()%500*3
	var addrs []string
	for i := range 3 {
		port := base + i
		dir := t.TempDir()
		c := exec.Command(server, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--dir", dir, "--save", "", "--appendonly", "no")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for _, a := range addrs {
		ok := false
		for range 50 {
			if exec.Command(cli, "-h", "127.0.0.1", "-p", strings.Split(a, ":")[1], "ping").Run() == nil {
				ok = true
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !ok {
			t.Fatalf("redis node %s did not start", a)
		}
	}
	create := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("creating the cluster: %v\n%s", err, out)
	}
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer rc.Close()
	ctx := context.Background()
	var err error
	for range 50 { // the cluster needs a moment to agree on its slots
		if err = rc.Set(ctx, "outbox_backfill.sentry_organization", "[777,4]", 0).Err(); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	schema := testdb.Schema(t, fixture.Options{})
	io, out, errOut := render.Test()
	code := cmd.Main(ctx, []string{"--dsn", testdb.DSN(), "--schema", schema, "backfill", "status", "sentry_organization",
		"--store", "redis", "--redis-cluster", strings.Join(addrs, ","), "-o", "json"}, io)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out.String(), `"low_bound": 777`) || !strings.Contains(out.String(), `"store": "redis"`) {
		t.Fatalf("output:\n%s", out)
	}
}
