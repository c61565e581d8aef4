package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Frame writes one frame of a watched command's output into w.
type Frame func(ctx context.Context, w io.Writer) error

// Watch redraws a frame every Interval until q, Ctrl-C or the context ends it.
type Watch struct {
	Out io.Writer
	// TTY redraws in place on the alternate screen; otherwise every frame is appended
	// under a line saying when it was taken, so a pipe or a log keeps the history.
	TTY bool
	// Keys are raw key presses (see render.Streams.KeyInput); nil when there is no
	// terminal, and Ctrl-C then arrives as a cancelled context.
	Keys     io.Reader
	Interval time.Duration
	// Title is the command being watched, shown in the header.
	Title string
	Now   func() time.Time
	// After is time.After; tests pass a channel they control.
	After func(time.Duration) <-chan time.Time
}

// Run draws frames until the user quits (q, Q, Ctrl-C, or the context is cancelled by
// SIGINT/SIGTERM): quitting is not an error, so the command exits 0. A frame that fails
// shows its error in place of the output and the watch goes on (a database that blinks
// must not end the watch); the error of the last frame is not returned.
func (w *Watch) Run(ctx context.Context, frame Frame) error {
	if w.Interval <= 0 {
		return errors.New("watch interval must be positive")
	}
	keys := readKeys(w.Keys)
	if w.TTY {
		fmt.Fprint(w.Out, altScreenOn)
		defer fmt.Fprint(w.Out, altScreenOff)
	}
	for {
		var buf bytes.Buffer
		err := frame(ctx, &buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			buf.Reset()
			fmt.Fprintf(&buf, "Error: %s\n", err)
		}
		w.draw(buf.String())
		quit, err := w.wait(ctx, keys)
		if quit || err != nil {
			return err
		}
	}
}

// wait blocks until the next frame is due (the interval passed, or r or space asked for
// it) or the user quits.
func (w *Watch) wait(ctx context.Context, keys <-chan byte) (quit bool, err error) {
	tick := w.After(w.Interval)
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case <-tick:
			return false, nil
		case k, ok := <-keys:
			switch {
			case !ok:
				keys = nil // stdin closed: only the interval and signals remain
			case k == 'q' || k == 'Q' || k == 3: // 3 is Ctrl-C in raw mode
				return true, nil
			case k == 'r' || k == ' ':
				return false, nil
			}
		}
	}
}

// header is the line above every frame: what is watched, when the frame was taken.
func (w *Watch) header() string {
	at := w.Now().UTC().Format("2006-01-02 15:04:05Z")
	if !w.TTY {
		return fmt.Sprintf("--- %s  every %s  %s", at, w.Interval, w.Title)
	}
	return fmt.Sprintf("Every %s: %s    taken %s    q to quit, r to refresh", w.Interval, w.Title, at)
}

func (w *Watch) draw(body string) {
	if !w.TTY {
		fmt.Fprintf(w.Out, "%s\n%s", w.header(), body)
		return
	}
	lines := strings.Split(strings.TrimSuffix(w.header()+"\n\n"+body, "\n"), "\n")
	for i := range lines {
		lines[i] += clearEOL
	}
	fmt.Fprint(w.Out, home+crlf(strings.Join(lines, "\n"))+"\r\n"+clearBelow)
}

// readKeys turns a reader into a channel of bytes, closed at EOF (nil reader: nil channel,
// which never delivers).
func readKeys(r io.Reader) <-chan byte {
	if r == nil {
		return nil
	}
	ch := make(chan byte, 16)
	go func() {
		defer close(ch)
		b := make([]byte, 16)
		for {
			n, err := r.Read(b)
			for _, c := range b[:n] {
				ch <- c
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}
