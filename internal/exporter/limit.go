package exporter

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// limitListener caps the connections open at once (as golang.org/x/net/netutil's
// LimitListener, which outboxctl does not depend on): at the cap, it first closes the
// connection idle or silent the longest (a client that sent a request and reads no more
// is idle once its answer is in the socket's buffers; one that never finished its request
// is silent), so a scrape is let in while such clients hold every slot, and otherwise
// waits for one to close (a write blocked on a client that reads nothing ends at the
// server's WriteTimeout).
type limitListener struct {
	net.Listener
	slots  chan struct{}
	closed chan struct{}
	once   sync.Once

	mu    sync.Mutex
	quiet map[*limitConn]time.Time // idle or new connections, since when

	accepted atomic.Int64 // connections accepted (the tests' count)
	open     atomic.Int64 // connections open now
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{}), quiet: map[*limitConn]time.Time{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.shed()
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	l.accepted.Add(1)
	l.open.Add(1)
	return &limitConn{Conn: c, l: l}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// shed closes the connection quiet the longest, if any.
func (l *limitListener) shed() {
	l.mu.Lock()
	var oldest *limitConn
	var since time.Time
	for c, t := range l.quiet {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	if oldest != nil {
		delete(l.quiet, oldest)
	}
	l.mu.Unlock()
	if oldest != nil {
		_ = oldest.Close()
	}
}

// connState is the server's ConnState hook: it keeps the quiet connections (new, idle).
func (l *limitListener) connState(c net.Conn, s http.ConnState) {
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew, http.StateIdle:
		l.quiet[lc] = time.Now()
	default:
		delete(l.quiet, lc)
	}
}

// limitConn gives its slot back when closed (once, whoever closes it).
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.quiet, c)
		c.l.mu.Unlock()
		c.l.open.Add(-1)
		<-c.l.slots
	})
	return err
}
