package options

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	ogorek "github.com/kisielk/og-rek"
)

func pickle(t *testing.T, v any, protocol int, compress bool) string {
	t.Helper()
	var buf bytes.Buffer
	if err := ogorek.NewEncoderWithConfig(&buf, &ogorek.EncoderConfig{Protocol: protocol}).Encode(v); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if compress {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		_, _ = w.Write(data)
		_ = w.Close()
		data = z.Bytes()
	}
	return base64.StdEncoding.EncodeToString(data)
}

func TestDecodeEveryEncoding(t *testing.T) {
	t.Parallel()
	want := []int64{1, 2}
	cases := map[string]struct {
		raw string
		enc Encoding
	}{
		// Byte strings from the reference (§5.2): Python 3's pickle of the tuple (1, 2) and of
		// the list [1, 2], protocol 2, as django-picklefield stored them.
		"ReferenceTuple": {"gAJLAUsChnEALg==", EncodingPickle},
		"ReferenceList":  {"gAJdcQAoSwFLAmUu", EncodingPickle},
		"JSONText":       {"[1,2]", EncodingJSON},
		"JSONB":          {"[1, 2]", EncodingJSON},
		"JSONSpaces":     {"  [1, 2]\n", EncodingJSON},
	}
	for _, proto := range []int{0, 1, 2, 3, 4, 5} {
		for _, z := range []bool{false, true} {
			name := "Protocol" + string(rune('0'+proto))
			enc := EncodingPickle
			if z {
				name += "Zlib"
				enc = EncodingPickleZlib
			}
			cases[name+"Tuple"] = struct {
				raw string
				enc Encoding
			}{pickle(t, ogorek.Tuple{int64(1), int64(2)}, proto, z), enc}
			cases[name+"List"] = struct {
				raw string
				enc Encoding
			}{pickle(t, []any{int64(1), int64(2)}, proto, z), enc}
		}
	}
	for name, c := range cases {
		v, err := Decode("hybrid_cloud.authentication.disabled_organization_shards", c.raw)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if v.Encoding != c.enc {
			t.Errorf("%s: encoding %s, want %s", name, v.Encoding, c.enc)
		}
		ids, strays, err := v.IDs()
		if err != nil || len(strays) != 0 || !reflect.DeepEqual(ids, want) {
			t.Errorf("%s: IDs = %v %v %v", name, ids, strays, err)
		}
	}
}

func TestDecodeScalarsAndEmpty(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int64{"4": 4, `"4"`: 4, pickle(t, int64(3), 2, false): 3} {
		v, err := Decode("outbox_replication.sentry_organization.replication_version", raw)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := v.Int(); err != nil || n != want {
			t.Errorf("Int(%s) = %d, %v", raw, n, err)
		}
	}
	for _, raw := range []string{"[]", "null", pickle(t, []any{}, 2, false), pickle(t, ogorek.None{}, 2, false)} {
		v, err := Decode("k", raw)
		if err != nil {
			t.Fatal(err)
		}
		if ids, strays, err := v.IDs(); err != nil || len(ids) != 0 || len(strays) != 0 {
			t.Errorf("IDs(%s) = %v %v %v", raw, ids, strays, err)
		}
	}
}

func TestStringIDsAreStrays(t *testing.T) {
	t.Parallel()
	v, err := Decode("k", `[42, "43", 44]`)
	if err != nil {
		t.Fatal(err)
	}
	ids, strays, err := v.IDs()
	if err != nil || !reflect.DeepEqual(ids, []int64{42, 44}) || !reflect.DeepEqual(strays, []string{`"43"`}) {
		t.Fatalf("IDs = %v %v %v", ids, strays, err)
	}
}

func TestMalformedValues(t *testing.T) {
	t.Parallel()
	// A protocol-0 pickle that would call os.system("echo pwned") if a Python unpickler ran it.
	evil := base64.StdEncoding.EncodeToString([]byte("cos\nsystem\n(S'echo pwned'\ntR."))
	for name, raw := range map[string]string{
		"NotJSONNotBase64": "[1, 2",
		"Base64NotPickle":  base64.StdEncoding.EncodeToString([]byte("hello world")),
		"CodeInPickle":     evil,
		"Huge":             "[" + strings.Repeat("1,", MaxValueSize/2) + "1]",
		"BadZlib":          base64.StdEncoding.EncodeToString([]byte{0x78, 0x9c, 1, 2, 3}),
	} {
		_, err := Decode("hybrid_cloud.authentication.disabled_user_shards", raw)
		var me *MalformedError
		if !errors.As(err, &me) {
			t.Errorf("%s: err = %v, want a MalformedError", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "option hybrid_cloud.authentication.disabled_user_shards has a malformed value (starts ") {
			t.Errorf("%s: message %q does not name the key and the start of the value", name, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: multi-line error", name)
		}
	}
	v, _ := Decode("k", `{"a": 1}`)
	if _, _, err := v.IDs(); err == nil {
		t.Error("a dict accepted as a list of ids")
	}
}

func TestEncodeIDs(t *testing.T) {
	t.Parallel()
	if got := EncodeIDs([]int64{1, 42}); got != "[1,42]" {
		t.Fatal(got)
	}
	if got := EncodeIDs(nil); got != "[]" {
		t.Fatal(got)
	}
}
