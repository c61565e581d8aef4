package drain

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// killWatch is the stream timeout of the Windows build (proc_windows.go); it is plain Go,
// so it is tested here, with a kill that counts.
func TestKillWatch(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		var kills atomic.Int32
		killed := make(chan struct{})
		stop := killWatch(context.Background(), time.Now().Add(time.Millisecond), func() {
			kills.Add(1)
			close(killed)
		})
		<-killed
		if err := stop(); !errors.Is(err, errTimeout) {
			t.Fatalf("stop after the deadline = %v, want errTimeout", err)
		}
		if n := kills.Load(); n != 1 {
			t.Fatalf("kill called %d times, want 1", n)
		}
	})
	t.Run("abandoned", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var kills atomic.Int32
		killed := make(chan struct{})
		stop := killWatch(ctx, time.Now().Add(time.Hour), func() {
			kills.Add(1)
			close(killed)
		})
		cancel()
		<-killed
		if err := stop(); !errors.Is(err, errAbandoned) {
			t.Fatalf("stop after ctx was cancelled = %v, want errAbandoned", err)
		}
		if n := kills.Load(); n != 1 {
			t.Fatalf("kill called %d times, want 1", n)
		}
	})
	t.Run("no deadline, stopped first", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var kills atomic.Int32
		stop := killWatch(ctx, time.Time{}, func() { kills.Add(1) })
		if err := stop(); err != nil {
			t.Fatalf("stop before anything fired = %v, want nil", err)
		}
		cancel() // after stop: its AfterFunc was removed, so nothing may run
		if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if n := kills.Load(); n != 0 {
			t.Fatalf("kill called %d times after stop, want 0", n)
		}
	})
}
