package db

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestAsksForTLS: any mention of TLS or of a service file, in the DSN or the environment,
// keeps libpq's behaviour exactly; only a DSN silent on both may skip the TLS attempt.
func TestAsksForTLS(t *testing.T) {
	cases := []struct {
		dsn     string
		environ []string
		want    bool
	}{
		{"postgres://127.0.0.1:5432/test", []string{"HOME=/root", "PGHOST=x"}, false},
		{"host=localhost dbname=test", nil, false},
		{"postgres://127.0.0.1/test?sslmode=prefer", nil, true},
		{"host=localhost sslmode=disable", nil, true},
		{"postgres://127.0.0.1/test?sslrootcert=/ca.pem", nil, true},
		{"postgres://127.0.0.1/test?SSLMODE=require", nil, true},
		{"service=prod", nil, true},
		{"postgres://127.0.0.1/test", []string{"PGSSLMODE=require"}, true},
		{"postgres://127.0.0.1/test", []string{"PGSSLROOTCERT=/ca.pem"}, true},
		{"postgres://127.0.0.1/test", []string{"PGSERVICE=prod"}, true},
		{"postgres://127.0.0.1/test", []string{"PGSERVICEFILE=/etc/pg_service.conf"}, true},
		{"", []string{"PGREQUIRESSL=1"}, true},
	}
	for _, c := range cases {
		if got := asksForTLS(c.dsn, c.environ); got != c.want {
			t.Errorf("asksForTLS(%q, %q) = %v, want %v", c.dsn, c.environ, got, c.want)
		}
	}
}

// TestPlainFirstOnLoopback checks the order of the attempts for each host list, as pgx
// parses them with libpq's default sslmode (prefer: TLS, then plain, per host): on loopback
// plain first, TLS after it as the fallback; elsewhere unchanged.
func TestPlainFirstOnLoopback(t *testing.T) {
	type attempt struct {
		host string
		tls  bool
	}
	cases := []struct {
		dsn  string
		want []attempt
	}{
		{"postgres://127.0.0.1:5432/test", []attempt{{"127.0.0.1", false}, {"127.0.0.1", true}}},
		{"postgres://localhost:5432/test", []attempt{{"localhost", false}, {"localhost", true}}},
		{"postgres://[::1]:5432/test", []attempt{{"::1", false}, {"::1", true}}},
		{"host=127.0.0.2 dbname=test", []attempt{{"127.0.0.2", false}, {"127.0.0.2", true}}},
		// A remote host keeps both attempts, TLS first.
		{"postgres://db.example.com:5432/test", []attempt{{"db.example.com", true}, {"db.example.com", false}}},
		{"postgres://10.0.0.5:5432/test", []attempt{{"10.0.0.5", true}, {"10.0.0.5", false}}},
		// Several hosts: each is judged on its own.
		{"host=127.0.0.1,db.example.com dbname=test", []attempt{{"127.0.0.1", false}, {"127.0.0.1", true}, {"db.example.com", true}, {"db.example.com", false}}},
		{"host=db.example.com,localhost dbname=test", []attempt{{"db.example.com", true}, {"db.example.com", false}, {"localhost", false}, {"localhost", true}}},
		// An explicit require has no plain attempt: nothing moves.
		{"postgres://127.0.0.1:5432/test?sslmode=require", []attempt{{"127.0.0.1", true}}},
		{"host=/var/run/postgresql dbname=test", []attempt{{"/var/run/postgresql", false}}},
	}
	for _, c := range cases {
		pc, err := pgx.ParseConfig(c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		plainFirstOnLoopback(pc)
		got := []attempt{{pc.Host, pc.TLSConfig != nil}}
		for _, f := range pc.Fallbacks {
			got = append(got, attempt{f.Host, f.TLSConfig != nil})
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: attempts %v, want %v", c.dsn, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: attempts %v, want %v", c.dsn, got, c.want)
				break
			}
		}
	}
}
