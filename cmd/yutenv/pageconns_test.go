package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
)

// TestPageServerAnswersBesideSlowClients holds 300 connections open on
// loopback that each trickle a request body a byte at a time, reconnecting
// whenever the server closes them, against a page server with its real
// limits (64 connections, 10 s to send a request). The player's requests
// made meanwhile, a page load and a new game, are each answered within a
// second, while the server never holds more than its cap of connections
// (and the one it is making room for). The attack stops by itself.
func TestPageServerAnswersBesideSlowClients(t *testing.T) {
	const slow = 300
	w := newWebGames(webConfig{rules: env.Standard(), spec: "random", seat: 0, seed: 3, maxGames: 64})
	h, err := w.handler()
	require.NoError(t, err)
	s := newPageServer(h)
	var counted *countingListener
	addr := startPage(t, s, func(ln net.Listener) net.Listener {
		counted = &countingListener{Listener: ln}
		return counted
	})
	head := "POST /api/games HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var dialed atomic.Int64
	for range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				conn, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					continue
				}
				dialed.Add(1)
				trickle(conn, head, stop)
				conn.Close()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for dialed.Load() < slow { // every slow client connected once
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // and trickling

	// A fresh connection a request: at the cap the server may close an idle keep-alive
	// connection, and a browser then retries on a new one where Go's client does not for a
	// POST (it fails with EOF). What is tested is that a new connection is served.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 6 {
		start := time.Now()
		var res *http.Response
		if i%2 == 0 {
			res, err = client.Get("http://" + addr + "/")
		} else {
			res, err = client.Post("http://"+addr+"/api/games", "application/json", strings.NewReader(`{}`))
		}
		took := time.Since(start)
		require.NoError(t, err, "request %d", i)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		assert.Less(t, res.StatusCode, 300, "request %d", i)
		assert.Less(t, took, time.Second, "request %d answered beside %d slow connections", i, slow)
		t.Logf("request %d (%s) answered in %v", i, res.Request.Method, took.Round(time.Millisecond))
		time.Sleep(150 * time.Millisecond)
	}
	assert.Greater(t, dialed.Load(), int64(slow), "the slow clients were shed and came back")
	assert.LessOrEqual(t, counted.peak(), s.maxConns+1, "connections held at once")
	assert.Equal(t, 3, w.numGames(), "only the player's requests made games")
	t.Logf("%d slow connections made; at most %d held at once (cap %d)", dialed.Load(), counted.peak(), s.maxConns)
}

// trickle sends head on conn, then a body byte every 50 ms, until a write
// fails (the server closed the connection), the body is all sent or stop
// is closed.
func trickle(conn net.Conn, head string, stop <-chan struct{}) {
	if _, err := io.WriteString(conn, head); err != nil {
		return
	}
	for range 200 {
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := conn.Write([]byte{' '}); err != nil {
			return
		}
	}
}

// The connection shed to make room is the one receiving its request the
// longest that the server has read from, else the one idle the longest,
// else the oldest one not yet read from; one being answered never is.
func TestShedListenerVictim(t *testing.T) {
	l := newShedListener(nil, 3)
	t0 := time.Now()
	add := func(p connPhase, age time.Duration, read bool) *shedConn {
		c := &shedConn{l: l, phase: p, since: t0.Add(-age)}
		c.read.Store(read)
		l.conns[c] = struct{}{}
		return c
	}
	serving := add(phaseServing, time.Hour, true)
	assert.Nil(t, l.victim(), "a connection being answered is never shed")
	unread := add(phaseReceiving, 3*time.Second, false)
	assert.Same(t, unread, l.victim(), "not yet read from, when nothing else can go")
	add(phaseReceiving, time.Second, false)
	assert.Same(t, unread, l.victim(), "the oldest not yet read from")
	idle := add(phaseIdle, time.Minute, true)
	assert.Same(t, idle, l.victim(), "idle before one not yet read from, however old")
	add(phaseReceiving, time.Second, true)
	old := add(phaseReceiving, 2*time.Second, true)
	assert.Same(t, old, l.victim(), "the oldest receiving that was read from, before any idle one")
	for c := range l.conns {
		if c != serving {
			delete(l.conns, c)
		}
	}
	assert.Nil(t, l.victim(), "a connection being answered is never shed")
}

// A connection's first read marks it as having had its turn.
func TestShedConnRecordsItsFirstRead(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	l := newShedListener(nil, 1)
	c := &shedConn{Conn: a, l: l, phase: phaseReceiving, since: time.Now()}
	l.conns[c] = struct{}{}
	require.False(t, c.read.Load())
	go func() { _, _ = b.Write([]byte("G")) }()
	buf := make([]byte, 1)
	_, err := c.Read(buf)
	require.NoError(t, err)
	assert.True(t, c.read.Load())
	assert.NoError(t, c.Close())
	assert.Empty(t, l.conns, "closing gives its place back")
}
