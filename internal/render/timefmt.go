package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeMode says how a person sees times: relative to now ("3m ago", the default) or as
// absolute UTC (--time absolute, for pasting into an incident timeline).
type TimeMode int

// The time modes.
const (
	TimeRelative TimeMode = iota
	TimeAbsolute
)

// ParseTimeMode validates --time.
func ParseTimeMode(s string) (TimeMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "relative":
		return TimeRelative, nil
	case "absolute", "utc":
		return TimeAbsolute, nil
	}
	return 0, fmt.Errorf("invalid time format %q: valid values are relative, absolute", s)
}

// Due is a scheduled time (scheduled_for, a shard's next attempt): on a terminal a time at
// or before now reads "due now", not "3s ago", because what matters is that it is due. JSON
// and plain output carry it as the time it is.
type Due time.Time

// String is the time in UTC to the nanosecond at a fixed width, so a Due compared by its
// text (a fan-out merge's fallback) sorts like the time it is.
func (d Due) String() string { return time.Time(d).UTC().Format("2006-01-02T15:04:05.000000000Z") }

// JSONText is text that may hold a JSON document (an outbox payload): JSON output nests it
// when it is valid JSON and carries it as a string otherwise, exactly as the handler
// document does; every other format shows the text.
type JSONText string

// Ratio is a fraction (0.308) that a person reads as a percentage ("30.8%"); JSON and plain
// output keep the number, so scripts are unaffected.
type Ratio float64

// thePast is Sentry's THE_PAST, the scheduled_for of a row never attempted.
var thePast = time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // constant

// absoluteLayout is the one absolute format: UTC to the second, marked Z.
const absoluteLayout = "2006-01-02 15:04:05Z"

// FormatTime is the one time formatter for people: "3m12s ago" or "in 4m" (relative), or
// "2026-11-28 18:57:03Z" (absolute). Sentry's THE_PAST reads "never attempted" in both modes,
// and the zero time is empty.
func FormatTime(t, now time.Time, mode TimeMode) string {
	switch {
	case t.IsZero():
		return ""
	case t.Equal(thePast):
		return "never attempted"
	case mode == TimeAbsolute:
		return t.UTC().Format(absoluteLayout)
	}
	d := now.Sub(t)
	if d >= 0 {
		return Since(d) + " ago"
	}
	return "in " + Since(-d)
}

// FormatDue formats a scheduled time: "never attempted" for THE_PAST, "due now" for a time
// at or before now, "in 4m" (or the absolute time) after.
func FormatDue(t, now time.Time, mode TimeMode) string {
	switch {
	case t.IsZero():
		return ""
	case t.Equal(thePast):
		return "never attempted"
	case !t.After(now):
		return "due now"
	}
	return FormatTime(t, now, mode)
}

// Since is a duration as a person reads it: its two largest units, the second left out when
// zero ("45s", "3m12s", "54m", "2h5m", "2d4h"). Below one second it is "0s".
func Since(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	s := int64(d / time.Second)
	units := []struct {
		n    int64
		name string
	}{{s / 86400, "d"}, {s % 86400 / 3600, "h"}, {s % 3600 / 60, "m"}, {s % 60, "s"}}
	for i, u := range units {
		if u.n == 0 && i < len(units)-1 {
			continue
		}
		out := strconv.FormatInt(u.n, 10) + u.name
		if i+1 < len(units) && units[i+1].n > 0 {
			out += strconv.FormatInt(units[i+1].n, 10) + units[i+1].name
		}
		return out
	}
	return "0s"
}

// Percent renders a fraction as a percentage with one decimal ("30.8%"); NaN and infinities
// are empty.
func Percent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// String is the flag value of the mode.
func (m *TimeMode) String() string {
	if *m == TimeAbsolute {
		return "absolute"
	}
	return "relative"
}

// Set parses --time, so a bad value is a flag error (exit 2) with no extra validation.
func (m *TimeMode) Set(s string) error {
	v, err := ParseTimeMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type names the flag's value in help.
func (m *TimeMode) Type() string { return "relative|absolute" }

// Commands are the next commands to run, each one shell command line: JSON output keeps
// them a list, a terminal card prints one a line (a "next:" block), a table cell and the
// plain formats join them with " ‖ ", a character no shell reads as an operator.
type Commands []string

// CommandSeparator joins Commands on one line.
const CommandSeparator = " ‖ "
