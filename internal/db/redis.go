package db

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisConfig says how to reach Redis: a redis:// or rediss:// URL, or a cluster's seed
// addresses. The password comes from the URL, else from REDISCLI_AUTH (as redis-cli reads it).
type RedisConfig struct {
	URL     string
	Cluster []string
	// Password is REDISCLI_AUTH, used when the URL carries none.
	Password string
	Timeout  time.Duration
}

// Given reports whether any Redis was named.
func (c RedisConfig) Given() bool { return c.URL != "" || len(c.Cluster) > 0 }

// silentLogger drops go-redis's own log lines ("redis: … connection pool: …"): they
// would reach stderr unformatted, outside outboxctl's one-line errors, and every failure
// they describe comes back to the caller as an error anyway.
type silentLogger struct{}

func (silentLogger) Printf(context.Context, string, ...any) {}

var silenceOnce sync.Once

// SilenceRedisLogger installs silentLogger (once; go-redis's logger is process-wide).
func SilenceRedisLogger() { silenceOnce.Do(func() { redis.SetLogger(silentLogger{}) }) }

// ConnectRedis builds the client and pings it. Errors never show the password.
func ConnectRedis(ctx context.Context, c RedisConfig) (redis.UniversalClient, error) {
	SilenceRedisLogger()
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	// Read from the URL's raw text: go-redis's parse is what may misplace them.
	secrets := append(Secrets(c.URL), c.Password)
	var client redis.UniversalClient
	var where string
	switch {
	case len(c.Cluster) > 0:
		client = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: c.Cluster, Password: c.Password,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
		})
		where = "Redis cluster " + strings.Join(c.Cluster, ",")
	default:
		opt, err := redis.ParseURL(c.URL)
		if err != nil {
			return nil, &Error{Kind: KindConfig, BadInput: true, Msg: Redact("invalid Redis URL "+c.URL+": "+err.Error(), secrets...),
				Hint: "use redis://[:PASSWORD@]HOST:6379/DB or rediss://… for TLS"}
		}
		if opt.Password == "" {
			opt.Password = c.Password
		}
		if strings.HasPrefix(c.URL, "rediss://") && opt.TLSConfig == nil {
			opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
		client = redis.NewClient(opt)
		where = "Redis at " + opt.Addr
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		_ = client.Close()
		msg := err.Error()
		kind, hint := KindUnreachable, "check --redis-url / OUTBOXCTL_REDIS_URL and that Redis is running"
		if strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "invalid password") {
			kind, hint = KindAuth, "check the password in the URL or REDISCLI_AUTH"
		}
		if errors.Is(err, context.DeadlineExceeded) {
			msg = "timed out"
		}
		return nil, &Error{Kind: kind, Err: err, Msg: Redact(fmt.Sprintf("cannot use %s: %s", where, msg), secrets...), Hint: hint}
	}
	return client, nil
}
