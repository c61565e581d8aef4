package db

import "strings"

// RedisFrom is the Redis to use: url (--redis-url), else $OUTBOXCTL_REDIS_URL; cluster
// (--redis-cluster: seed addresses, comma-separated); the password $REDISCLI_AUTH, used
// when the URL carries none.
func RedisFrom(url, cluster string, getenv func(string) string) RedisConfig {
	cfg := RedisConfig{URL: url, Password: getenv("REDISCLI_AUTH")}
	if cfg.URL == "" {
		cfg.URL = getenv("OUTBOXCTL_REDIS_URL")
	}
	if cluster != "" {
		cfg.Cluster = strings.Split(cluster, ",")
	}
	return cfg
}
