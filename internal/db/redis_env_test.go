package db_test

import (
	"reflect"
	"testing"

	"github.com/outboxctl/outboxctl/internal/db"
)

// TestRedisFrom: the flag's URL wins over $OUTBOXCTL_REDIS_URL, the cluster's seeds are
// split on commas, and the password is $REDISCLI_AUTH's.
func TestRedisFrom(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OUTBOXCTL_REDIS_URL": "redis://env:6379/0", "REDISCLI_AUTH": "pw"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		url, cluster string
		want         db.RedisConfig
	}{
		{"", "", db.RedisConfig{URL: "redis://env:6379/0", Password: "pw"}},
		{"redis://flag:6379/1", "", db.RedisConfig{URL: "redis://flag:6379/1", Password: "pw"}},
		{"", "a:1,b:2", db.RedisConfig{URL: "redis://env:6379/0", Cluster: []string{"a:1", "b:2"}, Password: "pw"}},
	} {
		if got := db.RedisFrom(c.url, c.cluster, getenv); !reflect.DeepEqual(got, c.want) {
			t.Errorf("RedisFrom(%q, %q) = %+v, want %+v", c.url, c.cluster, got, c.want)
		}
	}
}
