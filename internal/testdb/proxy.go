package testdb

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a loopback TCP forwarder to the test server that a test can silence: a server
// (or a PgBouncer, a NAT, a half-dead network) that keeps the connection open and stops
// answering, which the server's own statement_timeout can never report. Silenced, it keeps
// every socket open and reads what the client sends, and forwards nothing either way: the
// server never sees the statement, the client never hears back.
type Proxy struct {
	// Addr is where clients connect (127.0.0.1:PORT).
	Addr string

	upstream      string
	ln            net.Listener
	silent        atomic.Bool // Silence: nothing more is forwarded on any connection
	afterStartup  atomic.Bool // each connection goes silent after its startup
	mu            sync.Mutex
	conns         []net.Conn
	accepted      int
	refuseAfter   int                              // RefuseAfter's n (0: none refused)
	drop          func(typ byte, body []byte) bool // DropAfter's predicate
	hush          func(typ byte, body []byte) bool // SilenceAt's predicate (server messages)
	hold          func(typ byte, body []byte) bool // HoldFromClient's predicate (client messages)
	silencedStart chan struct{}                    // closed when a connection went silent after its startup
	once          sync.Once
}

// NewProxy starts a proxy to the test server (DSN's host and port); it stops with the test.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	u, err := url.Parse(DSN())
	if err != nil || u.Host == "" {
		t.Fatalf("the proxy needs a URL DSN with a host: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), upstream: u.Host, ln: ln, silencedStart: make(chan struct{})}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// DSN is the test server's DSN through the proxy, without TLS (the proxy reads the
// protocol to find the end of the startup).
func (p *Proxy) DSN() string {
	u, _ := url.Parse(DSN())
	u.Host = p.Addr
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

// Silence stops all forwarding, on the open connections and on every new one (whose
// startup then gets no answer).
func (p *Proxy) Silence() { p.silent.Store(true) }

// SilenceAfterStartup makes every connection go silent once the server said it is ready
// for its first query: the client connects, and its first statement gets no answer.
func (p *Proxy) SilenceAfterStartup() { p.afterStartup.Store(true) }

// SilencedStartup is closed once a connection went silent after its startup: the client
// is waiting for its first statement's answer.
func (p *Proxy) SilencedStartup() <-chan struct{} { return p.silencedStart }

// DropAfter closes a connection (both ends, as a network failure would) right after the
// server sent it a message for which drop returns true (typ is the message type, body its
// contents: 'C' and "UPDATE 3\x00" for an UPDATE's CommandComplete). drop is called from
// one goroutine at a time.
func (p *Proxy) DropAfter(drop func(typ byte, body []byte) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = drop
}

// SilenceAt makes a connection go silent at the first server message for which hush returns
// true: that message and every one after it are never forwarded, and the client hears
// nothing more (its sockets stay open). Given CommandComplete "COMMIT", the server committed
// and the client never learns it: a COMMIT in doubt. hush is called from one goroutine at a
// time.
func (p *Proxy) SilenceAt(hush func(typ byte, body []byte) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hush = hush
}

// HoldFromClient makes a connection go silent at the first message from its client (after
// the startup) for which hold returns true: that message never reaches the server, which
// sees its side of the connection closed (and rolls back the open transaction at once), and
// the client hears nothing more on its side, which stays open. Given the client's COMMIT, the
// transaction never committed and the client cannot know it. hold is called from one
// goroutine at a time.
func (p *Proxy) HoldFromClient(hold func(typ byte, body []byte) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = hold
}

func (p *Proxy) matches(pred *func(typ byte, body []byte) bool, typ byte, body []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return *pred != nil && (*pred)(typ, body)
}

// RefuseAfter closes every connection after the first n as soon as it is accepted: the
// server is gone for whatever connects next.
func (p *Proxy) RefuseAfter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuseAfter = n
}

func (p *Proxy) dropAfter(typ byte, body []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.drop != nil && p.drop(typ, body)
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted++
		refused := p.refuseAfter > 0 && p.accepted > p.refuseAfter
		p.mu.Unlock()
		if refused {
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		var quiet atomic.Bool
		go p.clientToServer(c, s, &quiet)
		go p.serverToClient(s, c, &quiet)
	}
}

func (p *Proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// clientToServer answers an SSL or GSS encryption request with 'N' (the proxy must read the
// server's messages), then forwards until the connection goes quiet, and discards after.
func (p *Proxy) clientToServer(c, s net.Conn, quiet *atomic.Bool) {
	r := bufio.NewReader(c)
	for {
		head, err := r.Peek(8)
		if err != nil {
			return
		}
		code := binary.BigEndian.Uint32(head[4:])
		if binary.BigEndian.Uint32(head) != 8 || (code != 80877103 && code != 80877104) {
			break
		}
		_, _ = r.Discard(8)
		if _, err := c.Write([]byte{'N'}); err != nil {
			return
		}
	}
	p.mu.Lock()
	parse := p.hold != nil
	p.mu.Unlock()
	if parse {
		p.forwardMessages(r, s, quiet)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 && !p.silent.Load() && !quiet.Load() {
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// forwardMessages forwards the client's startup, then its messages one by one until one is
// held (HoldFromClient); after that it discards what the client sends.
func (p *Proxy) forwardMessages(r *bufio.Reader, s net.Conn, quiet *atomic.Bool) {
	defer s.Close()
	head := make([]byte, 4)
	if _, err := io.ReadFull(r, head); err != nil {
		return
	}
	startup := make([]byte, int64(binary.BigEndian.Uint32(head))-4)
	if _, err := io.ReadFull(r, startup); err != nil {
		return
	}
	if _, err := s.Write(append(head, startup...)); err != nil {
		return
	}
	for {
		head := make([]byte, 5)
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		body := make([]byte, int64(binary.BigEndian.Uint32(head[1:]))-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if !quiet.Load() && p.matches(&p.hold, head[0], body) {
			quiet.Store(true)
			_ = s.Close()
		}
		if p.silent.Load() || quiet.Load() {
			continue
		}
		if _, err := s.Write(append(head, body...)); err != nil {
			return
		}
	}
}

// serverToClient forwards the server's messages one by one, so that it can go quiet right
// after the startup's ReadyForQuery.
func (p *Proxy) serverToClient(s, c net.Conn, quiet *atomic.Bool) {
	r := bufio.NewReader(s)
	started := false
	for {
		head := make([]byte, 5)
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		n := int64(binary.BigEndian.Uint32(head[1:])) - 4
		if p.silent.Load() || quiet.Load() {
			if _, err := io.CopyN(io.Discard, r, n); err != nil {
				return
			}
			continue
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if p.matches(&p.hush, head[0], body) {
			quiet.Store(true)
			continue
		}
		if _, err := c.Write(append(head, body...)); err != nil {
			return
		}
		if p.dropAfter(head[0], body) {
			_ = c.Close()
			_ = s.Close()
			return
		}
		if head[0] == 'Z' && !started {
			started = true
			if p.afterStartup.Load() {
				quiet.Store(true)
				p.once.Do(func() { close(p.silencedStart) })
			}
		}
	}
}

// Within runs fn and fails the test if it has not returned by limit: the safety net that
// turns a hang (the bug a silent server causes) into a failure. It is no synchronisation:
// fn's own deadline is what ends it. It returns how long fn took and its error.
func Within(t testing.TB, limit time.Duration, what string, fn func() error) (time.Duration, error) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(limit):
		t.Fatalf("%s: still waiting after %s: a silent server makes it hang", what, limit)
		return 0, nil
	}
}
