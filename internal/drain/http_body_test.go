package drain

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHTTPErrorBodyHidesEveryPieceAtTheCut: a receiver that echoes a secret header after
// 440 to 520 bytes of padding, around the 500-rune cut of its error body, never gets 4 bytes
// of the secret into the failure message, whether it echoes the whole Authorization value or
// the token alone. On 99e59e3 the body was cut at 500 bytes before redaction: a pad of 470
// printed "hunter2hunter2hun", a prefix of the token Redact did not know as a piece.
func TestHTTPErrorBodyHidesEveryPieceAtTheCut(t *testing.T) {
	t.Parallel()
	const token = "hunter2hunter2hunter2"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pad, _ := strconv.Atoi(r.Header.Get("X-Pad"))
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(strings.Repeat("p", pad) + r.Header.Get(r.Header.Get("X-Echo")) + " the end"))
	}))
	defer srv.Close()
	for _, echo := range []string{"Authorization", "X-Token"} {
		for pad := 440; pad <= 520; pad++ {
			h, err := ParseHandler(HandlerConfig{Spec: srv.URL + "/h", Timeout: 10 * time.Second, Getenv: func(string) string { return token },
				Headers: []string{"Authorization: Bearer $TOKEN", "X-Token: $TOKEN", "X-Echo: " + echo, "X-Pad: " + strconv.Itoa(pad)}})
			if err != nil {
				t.Fatal(err)
			}
			err = h.Deliver(context.Background(), Message{ID: 1})
			if err == nil {
				t.Fatalf("echo %s, pad %d: delivered", echo, pad)
			}
			// The status line holds "nter": the body is what must hold no piece.
			prefix := "handler " + srv.URL + "/h answered 500 Internal Server Error: "
			msg, ok := strings.CutPrefix(err.Error(), prefix)
			if !ok || !strings.HasPrefix(msg, strings.Repeat("p", 440)) {
				t.Fatalf("echo %s, pad %d: %q does not start with %q and the padding", echo, pad, err, prefix)
			}
			for i := 0; i+4 <= len(token); i++ {
				if strings.Contains(msg, token[i:i+4]) {
					t.Fatalf("echo %s, pad %d: %q holds %q of the token", echo, pad, msg[max(0, len(msg)-80):], token[i:i+4])
				}
			}
		}
	}
}
