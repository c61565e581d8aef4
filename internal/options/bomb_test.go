package options

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// b64 encodes a raw pickle as django-picklefield stores it.
func b64(pickle string) string { return base64.StdEncoding.EncodeToString([]byte(pickle)) }

func zlibbed(pickle string) string {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write([]byte(pickle))
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(z.Bytes())
}

// bombs are pickles whose decoded value is exponential (or huge) in their size. Each one must
// fail alone, quickly, in little memory, with a one-line error of bounded length.
func bombs() map[string]string {
	dupTuple := "\x80\x02K\x01" + strings.Repeat("2\x86", 27) + "." // the 80-byte value of issue #10
	memo := "\x80\x02K\x01q\x00"                                    // BINPUT 0
	for range 40 {
		memo += "h\x00h\x00\x86q\x00" // BINGET 0, BINGET 0, TUPLE2, BINPUT 0
	}
	listMemo := "\x80\x02](K\x01eq\x00"
	for range 40 {
		listMemo += "](h\x00h\x00eq\x00" // a list holding the previous list twice
	}
	dictMemo := "\x80\x02}q\x00"
	for range 40 {
		dictMemo += "}q\x01(X\x01\x00\x00\x00ah\x00X\x01\x00\x00\x00bh\x00u0h\x01q\x00"
	}
	return map[string]string{
		"DupTuple72":      b64("\x80\x02K\x01" + strings.Repeat("2\x86", 23) + "."),
		"DupTuple80":      b64(dupTuple),
		"DupTuple1000":    b64("\x80\x02K\x01" + strings.Repeat("2\x86", 500) + "."),
		"MemoGetTuple":    b64(memo + "."),
		"MemoBinGetList":  b64(listMemo + "."),
		"MemoDict":        b64(dictMemo + "."),
		"DeepLists":       b64("\x80\x02" + strings.Repeat("]", 10000) + strings.Repeat("a", 9999) + "."),
		"DeepDicts":       b64("\x80\x02" + strings.Repeat("}X\x01\x00\x00\x00k", 5000) + strings.Repeat("s", 4999) + "."),
		"ZlibDupTuple":    zlibbed(dupTuple),
		"ZlibWideList":    zlibbed("\x80\x02](" + strings.Repeat("K\x01", 400000) + "e."),
		"ZlibHuge":        zlibbed("\x80\x02](" + strings.Repeat("K\x01", 5<<20) + "e."),
		"WideList":        b64("\x80\x02](" + strings.Repeat("K\x01", 60000) + "e."),
		"HugeLong":        b64("L" + strings.Repeat("9", 700000) + "L\n."),
		"LongUnderCap":    b64("L" + strings.Repeat("9", MaxPickleSize-4) + "L\n."),
		"ProtocolZeroGet": b64("I1\np0\n" + strings.Repeat("(g0\ng0\ntp0\n", 40) + "."),
	}
}

// TestPickleBombsAreBounded decodes each bomb under a time and memory bound, and checks that
// the error is a short MalformedError.
func TestPickleBombsAreBounded(t *testing.T) {
	for name, raw := range bombs() {
		t.Run(name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			v, err := Decode(DisabledOrgShards, raw)
			decodeErr := err
			if err == nil {
				_, _, err = v.IDs()
			}
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			if elapsed > time.Second {
				t.Errorf("took %s, want < 1s", elapsed)
			}
			if allocated > 100<<20 {
				t.Errorf("allocated %d MB, want < 100 MB", allocated>>20)
			}
			if name == "LongUnderCap" || name == "WideList" {
				if decodeErr != nil {
					t.Fatalf("a plain value under the caps failed: %v", decodeErr)
				}
				return
			}
			var me *MalformedError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want a MalformedError", err)
			}
			if len(err.Error()) > 400 || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is %d bytes (or multi-line): %.200q", len(err.Error()), err)
			}
		})
	}
}

// TestBombExactMessage pins the error of the 80-byte bomb.
func TestBombExactMessage(t *testing.T) {
	_, err := Decode(DisabledOrgShards, bombs()["DupTuple80"])
	want := `option hybrid_cloud.authentication.disabled_organization_shards has a malformed value (starts "gAJLATKGMoYyhjKGMoYyhjKGMoYyhjKGMoYyhjKG…"): expands to more than 262144 values (a pickle bomb?); fix it with ` +
		"`sentry config set hybrid_cloud.authentication.disabled_organization_shards …` or outboxctl killswitch"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
}

// TestLargeLegitimateList decodes a pickled list of 60,000 ids: under both caps.
func TestLargeLegitimateList(t *testing.T) {
	var b strings.Builder
	b.WriteString("\x80\x02](")
	for range 60000 {
		b.WriteString("K\x07")
	}
	b.WriteString("e.")
	v, err := Decode(DisabledUserShards, zlibbed(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	ids, _, err := v.IDs()
	if err != nil || len(ids) != 60000 {
		t.Fatalf("%d ids, %v", len(ids), err)
	}
}
