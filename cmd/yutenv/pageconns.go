package main

// The connections of a page server: at most a cap of them at once, and
// when the cap is reached a new one makes room by closing the connection
// that is slowest to send its request, so that clients trickling their
// requests cannot lock the page's own requests out.

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connPhase is what a page server's connection is doing.
type connPhase uint8

const (
	// phaseReceiving: the client is sending a request (its headers, or
	// its body, which wholeRequests reads before the handler runs), or
	// has connected and sent nothing yet.
	phaseReceiving connPhase = iota
	// phaseServing: the request is read and is being answered.
	phaseServing
	// phaseIdle: a kept-alive connection waiting for its next request.
	phaseIdle
)

// shedListener accepts at most max connections at once. When a new one
// comes at the cap, it closes the connection that has been sending its
// request the longest, or else the one idle the longest, to make room (it
// sheds it); only when every connection is being answered does the new one
// wait until one closes. A page's own requests arrive whole in a moment,
// so a client that trickles its requests over many connections sheds its
// own connections, not the page's. A connection the server has not yet
// read from is shed only when no other can be: on a busy machine its
// goroutine may not have run yet, and a client reconnecting fast would
// otherwise push it out before its request, whole in the socket, is read.
type shedListener struct {
	net.Listener
	max   int
	mu    sync.Mutex
	cond  *sync.Cond
	conns map[*shedConn]struct{}
	shut  bool
	shed  int // the connections shed, for tests
}

// newShedListener wraps ln with a cap of max connections (at least 1).
func newShedListener(ln net.Listener, max int) *shedListener {
	l := &shedListener{Listener: ln, max: max, conns: map[*shedConn]struct{}{}}
	if l.max < 1 {
		l.max = 1
	}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// shedConn is a connection of a shedListener with its phase.
type shedConn struct {
	net.Conn
	l     *shedListener
	phase connPhase
	since time.Time   // when the phase began
	read  atomic.Bool // the server has read from it (had its turn)
	once  sync.Once
}

// Read reads from the connection, recording that the server had its turn.
func (c *shedConn) Read(p []byte) (int, error) {
	c.read.Store(true)
	return c.Conn.Read(p)
}

// Accept waits for a connection and makes room for it under the cap.
func (l *shedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	for !l.shut && len(l.conns) >= l.max {
		v := l.victim()
		if v == nil {
			l.cond.Wait() // every connection is being answered
			continue
		}
		delete(l.conns, v)
		l.shed++
		l.mu.Unlock()
		_ = v.Conn.Close() // its server goroutine sees the error and ends
		l.mu.Lock()
	}
	if l.shut {
		l.mu.Unlock()
		c.Close()
		return nil, net.ErrClosed
	}
	sc := &shedConn{Conn: c, l: l, phase: phaseReceiving, since: time.Now()}
	l.conns[sc] = struct{}{}
	l.mu.Unlock()
	return sc, nil
}

// victim returns the connection to shed: the one receiving its request
// the longest that the server has read from, else the one idle the
// longest, else the oldest not yet read from, else nil. l.mu is held.
func (l *shedListener) victim() *shedConn {
	var recv, idle, unread *shedConn
	older := func(c, than *shedConn) bool { return than == nil || c.since.Before(than.since) }
	for c := range l.conns {
		switch {
		case c.phase == phaseReceiving && !c.read.Load():
			if older(c, unread) {
				unread = c
			}
		case c.phase == phaseReceiving:
			if older(c, recv) {
				recv = c
			}
		case c.phase == phaseIdle:
			if older(c, idle) {
				idle = c
			}
		}
	}
	switch {
	case recv != nil:
		return recv
	case idle != nil:
		return idle
	}
	return unread
}

// Close stops accepting: an Accept waiting for room returns net.ErrClosed.
func (l *shedListener) Close() error {
	l.mu.Lock()
	l.shut = true
	l.cond.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// setPhase records that c (a connection of l) entered phase p.
func (l *shedListener) setPhase(c net.Conn, p connPhase) {
	sc, ok := c.(*shedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	if _, ok := l.conns[sc]; ok && sc.phase != p {
		sc.phase, sc.since = p, time.Now()
	}
	l.mu.Unlock()
}

// connState is the http.Server's ConnState hook: a request's first byte
// makes its connection receiving, the end of its answer idle.
func (l *shedListener) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateActive:
		l.setPhase(c, phaseReceiving)
	case http.StateIdle:
		l.setPhase(c, phaseIdle)
	}
}

// Close closes the connection and gives its place back.
func (c *shedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		if _, ok := c.l.conns[c]; ok {
			delete(c.l.conns, c)
			c.l.cond.Broadcast()
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// connKey is the context key of a request's connection (connContext).
type connKey struct{}

// connContext is the http.Server's ConnContext hook: it puts the
// connection in its requests' context for wholeRequests.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// wholeRequests reads up to maxBody+1 bytes of a request's body before h
// runs, then marks the connection serving (it may no longer be shed): a
// request is being received until its body has arrived. h reads the body
// as sent, the bytes read here first, then any the client sends past them,
// then the error that ended the reading (a read timeout, the connection
// shed).
func (l *shedListener) wholeRequests(maxBody int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			var rest io.Reader = r.Body
			if err != nil {
				rest = errReader{err}
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), rest), r.Body}
		}
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			l.setPhase(c, phaseServing)
		}
		h.ServeHTTP(w, r)
	})
}

// errReader returns its error on every read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
