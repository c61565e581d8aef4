// Package options reads and writes the values of Sentry's options tables (sentry_option,
// sentry_controloption). A value is stored in one of three encodings, depending on when it was
// last written (reference §5.2):
//
//   - a base64 pickle (django-picklefield, protocol 2 by default; protocols 0–5 and zlib
//     compression are possible), in a text column, until March 2023;
//   - JSON in a text column, until mid-2025;
//   - jsonb, after.
//
// Reading follows Sentry's own order (PICKLE_READ_JSON): JSON first, then base64 pickle.
// Pickles are decoded by a decoder that builds plain values and runs no code, with the input
// size capped. Writing is always JSON.
package options

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	ogorek "github.com/kisielk/og-rek"
)

// MaxValueSize caps the stored value outboxctl decodes (a kill-switch list of 10,000 ids is
// under 100 KB as JSON).
const MaxValueSize = 1 << 20

// MaxPickleSize caps a pickle (after inflation). Pickles are a pre-2023 encoding that
// Sentry's migrations rewrote as JSON; 128 KiB still holds tens of thousands of ids, and
// keeps the cost of the decoder's worst opcodes (a LONG of 100,000 decimal digits parses in
// quadratic time) small.
const MaxPickleSize = 128 << 10

// MaxElements caps the values a decoded pickle may expand to. A pickle can refer back to an
// object it already built (memo GET, DUP), so 80 bytes can describe a tuple of 2^27 leaves:
// the limit is on the expanded value, counted while it is built, not on the input size.
// 2^18 leaves room for a kill-switch list of a quarter of a million ids.
const MaxElements = 1 << 18

// MaxDepth caps how deeply a decoded pickle may nest lists and dicts.
const MaxDepth = 32

// previewLen caps how much of a stored value an error quotes.
const previewLen = 40

// Encoding names how a value was stored.
type Encoding string

// The encodings Sentry has used.
const (
	EncodingJSON       Encoding = "json"
	EncodingPickle     Encoding = "pickle"
	EncodingPickleZlib Encoding = "pickle+zlib"
)

// Value is a decoded option value.
type Value struct {
	Key      string
	Encoding Encoding
	// Data is the value as JSON would hold it: nil, bool, json.Number, string, []any, map[string]any.
	Data any
}

// MalformedError says which option could not be read and how its raw value starts.
type MalformedError struct {
	Key    string
	Start  string
	Reason string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("option %s has a malformed value (starts %q): %s; fix it with `sentry config set %s …` or outboxctl killswitch",
		e.Key, e.Start, e.Reason, e.Key)
}

func malformed(key, raw, reason string) error {
	return &MalformedError{Key: key, Start: clip(raw, previewLen), Reason: clip(escapeControls(reason), 2*previewLen)}
}

// escapeControls writes control characters as \xHH (\u2028 as \u2028): a decoder's message
// can quote the bytes it choked on, and an error is one line on a terminal.
func escapeControls(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r == '\u2028' || r == '\u2029' || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clip shortens s to at most n bytes (on a rune boundary), marking the cut: error text that
// quotes a stored value stays one short line however large the value.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// preview is a short text form of a decoded value, for an error.
func preview(v any) string { return clip(fmt.Sprint(v), previewLen) }

// Decode reads a raw stored value (the column's text form; jsonb arrives as JSON text).
func Decode(key, raw string) (Value, error) {
	if len(raw) > MaxValueSize {
		return Value{}, malformed(key, raw, fmt.Sprintf("larger than %d bytes", MaxValueSize))
	}
	trimmed := strings.TrimSpace(raw)
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		return Value{Key: key, Encoding: EncodingJSON, Data: v}, nil
	}
	// Base64 pickles are never valid JSON (Sentry relies on that too, PR #36350).
	data, err := base64.StdEncoding.DecodeString(trimmed)
	if err != nil {
		return Value{}, malformed(key, raw, "neither JSON nor a base64 pickle")
	}
	enc := EncodingPickle
	if len(data) >= 2 && data[0] == 0x78 && (uint16(data[0])<<8|uint16(data[1]))%31 == 0 {
		zr, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			return Value{}, malformed(key, raw, "bad zlib stream: "+err.Error())
		}
		inflated, err := io.ReadAll(io.LimitReader(zr, MaxPickleSize+1))
		if err != nil && len(inflated) <= MaxPickleSize {
			return Value{}, malformed(key, raw, "bad zlib stream: "+err.Error())
		}
		data, enc = inflated, EncodingPickleZlib
	}
	if len(data) > MaxPickleSize {
		return Value{}, malformed(key, raw, fmt.Sprintf("a pickle of more than %d bytes; rewrite it as JSON with sentry config set", MaxPickleSize))
	}
	obj, err := ogorek.NewDecoder(bytes.NewReader(data)).Decode()
	if err != nil {
		return Value{}, malformed(key, raw, "bad pickle: "+err.Error())
	}
	plain, err := (&unpickler{budget: MaxElements}).plain(obj, 0)
	if err != nil {
		return Value{}, malformed(key, raw, err.Error())
	}
	return Value{Key: key, Encoding: enc, Data: plain}, nil
}

// unpickler turns decoded pickle objects into the values JSON would hold, spending one unit
// of budget per value it builds: shared references are expanded here, so this is where a
// pickle bomb is stopped. Anything that is not plain data (a class, a call, a persistent
// reference) is refused, never instantiated.
type unpickler struct{ budget int }

var errTooLarge = fmt.Errorf("expands to more than %d values (a pickle bomb?)", MaxElements)

func (u *unpickler) plain(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("nested more than %d deep", MaxDepth)
	}
	if u.budget--; u.budget < 0 {
		return nil, errTooLarge
	}
	switch x := v.(type) {
	case nil, ogorek.None:
		return nil, nil
	case bool:
		return x, nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case *big.Int:
		return json.Number(x.String()), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("float %v has no JSON form", x)
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), nil
	case string:
		return x, nil
	case ogorek.Bytes:
		return string(x), nil
	case ogorek.ByteString:
		return string(x), nil
	case []any:
		return u.list(x, depth)
	case ogorek.Tuple:
		return u.list([]any(x), depth)
	case map[any]any:
		return u.dict(x, depth)
	}
	return nil, fmt.Errorf("pickle holds %T, not plain data; outboxctl decodes only lists, tuples, dicts, numbers and strings", v)
}

func (u *unpickler) list(items []any, depth int) ([]any, error) {
	if len(items) > u.budget {
		return nil, errTooLarge
	}
	out := make([]any, len(items))
	for i, e := range items {
		pv, err := u.plain(e, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = pv
	}
	return out, nil
}

func (u *unpickler) dict(m map[any]any, depth int) (map[string]any, error) {
	if len(m) > u.budget {
		return nil, errTooLarge
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		ks, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("dict key of type %T is not a string", k)
		}
		pv, err := u.plain(e, depth+1)
		if err != nil {
			return nil, err
		}
		out[ks] = pv
	}
	return out, nil
}

// IDs reads a Sequence option of shard ids, as should_skip_shard uses it. Sentry compares
// `shard_identifier in <list>`, so only integers match: a string "42" in the list disables
// nothing, and is reported in strays rather than silently counted.
func (v Value) IDs() (ids []int64, strays []string, err error) {
	if v.Data == nil {
		return nil, nil, nil
	}
	items, ok := v.Data.([]any)
	if !ok {
		return nil, nil, &MalformedError{Key: v.Key, Start: preview(v.Data), Reason: "not a list"}
	}
	for _, it := range items {
		switch x := it.(type) {
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				strays = append(strays, clip(x.String(), previewLen))
				continue
			}
			ids = append(ids, n)
		default:
			strays = append(strays, clip(strconv.Quote(fmt.Sprint(it)), previewLen))
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, strays, nil
}

// StrictIDs is IDs for a change: entries that are not integer ids are an error, since
// rewriting the list would either keep or drop them silently.
func (v Value) StrictIDs() ([]int64, error) {
	ids, strays, err := v.IDs()
	if err != nil {
		return nil, err
	}
	if len(strays) > 0 {
		return nil, fmt.Errorf("option %s lists %s, which are not integer ids; fix the value by hand (sentry config set %s '[…]') before changing it", v.Key, Strays(strays), v.Key)
	}
	return ids, nil
}

// Strays renders list entries that are not ids, briefly: an error or warning quoting them
// stays one short line however many there are.
func Strays(strays []string) string {
	return "[" + clip(strings.Join(strays, " "), 2*previewLen) + "]"
}

// Int reads an Int option (outbox_replication.<table>.replication_version).
func (v Value) Int() (int64, error) {
	switch x := v.Data.(type) {
	case json.Number:
		n, err := x.Int64()
		if err == nil {
			return n, nil
		}
	case string:
		// Sentry's Int type coerces strings.
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, &MalformedError{Key: v.Key, Start: preview(v.Data), Reason: "not an integer"}
}

// Strings reads a Sequence option of strings (a backfill's target_cells).
func (v Value) Strings() ([]string, error) {
	items, ok := v.Data.([]any)
	if !ok {
		return nil, &MalformedError{Key: v.Key, Start: preview(v.Data), Reason: "not a list"}
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, &MalformedError{Key: v.Key, Start: preview(v.Data), Reason: "not a list of names"}
		}
		out = append(out, s)
	}
	return out, nil
}

// DecodeInt decodes a stored Int option (a replication_version gate).
func DecodeInt(key, raw string) (int64, error) {
	v, err := Decode(key, raw)
	if err != nil {
		return 0, err
	}
	return v.Int()
}

// EncodeIDs writes a list of shard ids as Sentry's JSON encoder would: compact, integers.
func EncodeIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
