// Package audit writes the audit line of a change: one JSON object on stderr saying who ran
// what, when, against which database (never a password) and why. Payloads never go into it.
package audit

import (
	"encoding/json"
	"os"
	"os/user"
	"time"
)

// Line is the JSON audit line of command: who (User), when (now, UTC), target (the database,
// described without its password), and fields (what, why), which win over those keys.
func Line(command, target string, fields map[string]any, now time.Time) string {
	rec := map[string]any{
		"audit": "outboxctl", "command": command, "who": User(), "when": now.UTC().Format(time.RFC3339),
		"target": target,
	}
	for k, v := range fields {
		rec[k] = v
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

// User names who ran a command, for audit lines and archives: $SUDO_USER, $USER, $LOGNAME,
// else the operating system's account, else "unknown".
func User() string {
	for _, k := range []string{"SUDO_USER", "USER", "LOGNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}
