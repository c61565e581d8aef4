//go:build windows

package pgtmp

import (
	"context"
	"errors"
)

// errWindows: the throwaway servers use Unix sockets, sessions and signals.
var errWindows = errors.New("a throwaway PostgreSQL or Redis needs Linux or macOS: set OUTBOXCTL_DSN (OUTBOXCTL_TEST_DSN for the tests) to a server")

// Options say how to start a throwaway cluster.
type Options struct {
	BinDir     string
	RunAs      *User
	Keep       bool
	Autovacuum bool
}

// Cluster is a running throwaway PostgreSQL (never on Windows).
type Cluster struct {
	Dir, DSN, SocketDSN string
	Port                int
}

// Redis is a running throwaway redis-server (never on Windows).
type Redis struct{ Dir, Addr string }

// Start fails on Windows.
func Start(context.Context, Options) (*Cluster, error) { return nil, errWindows }

// Stop does nothing on Windows.
func (*Cluster) Stop() {}

// StartRedis fails on Windows.
func StartRedis(string) (*Redis, error) { return nil, errWindows }

// Stop does nothing on Windows.
func (*Redis) Stop() {}

// Remove fails on Windows.
func Remove(string) error { return errWindows }

// Reap does nothing on Windows.
func Reap() {}
