package server

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/protocol"
)

// BenchmarkLoad is the load benchmark of docs/BENCHMARKS.md: C concurrent
// clients, each on its own Unix-socket connection (as the Python package
// connects) with one handle of N envs (N = 1: single envs; N = 64: batched),
// all stepping at once. One op is one step by every client. It reports
// env steps per second over all clients, the p50 and p99 latency of a
// step round trip, step errors, clients refused at hello (the server's
// --max-conns, 64 by default, is below C = 128: the /max-conns=128 variants
// raise it), and the process's resident memory (server and clients share
// the process; the clients hold a few hundred kB).
func BenchmarkLoad(b *testing.B) {
	for _, clients := range []int{16, 64, 128} {
		for _, n := range []int{1, 64} {
			limits := []int{0}
			if clients > DefaultMaxConns {
				limits = append(limits, clients)
			}
			for _, maxConns := range limits {
				name := fmt.Sprintf("clients=%d/envs=%d", clients, n)
				if maxConns > 0 {
					name += fmt.Sprintf("/max-conns=%d", maxConns)
				}
				b.Run(name, func(b *testing.B) { benchLoad(b, clients, n, maxConns) })
			}
		}
	}
}

// loadClient is one client of BenchmarkLoad with its handle and actions.
type loadClient struct {
	c       *client.Client
	h       uint64
	actions []int32
	lat     []time.Duration
	errs    int
}

func benchLoad(b *testing.B, clients, n, maxConns int) {
	ts := startServer(b, "unix", Config{MaxConns: maxConns})
	var served []*loadClient
	refused := 0
	for range clients {
		c := ts.dial(b)
		if _, err := c.Hello(""); err != nil {
			if errCode(err) != protocol.CodeLimitExceeded {
				b.Fatalf("hello: %v", err)
			}
			refused++
			continue
		}
		lc := &loadClient{c: c, h: makeHandle(b, c, map[string]any{"n": n}), actions: make([]int32, n)}
		res, err := c.Call("reset", map[string]any{"handle": lc.h, "seed": len(served)})
		if err != nil {
			b.Fatal(err)
		}
		firstLegal(res["mask"].([]byte), lc.actions)
		served = append(served, lc)
	}
	for _, lc := range served {
		lc.lat = make([]time.Duration, 0, b.N)
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, lc := range served {
		wg.Go(func() {
			for range b.N {
				t0 := time.Now()
				r, err := lc.c.Step(lc.h, lc.actions, 0)
				lc.lat = append(lc.lat, time.Since(t0))
				if err != nil {
					lc.errs++
					return
				}
				firstLegal(r.Mask, lc.actions)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	var all []time.Duration
	errs := 0
	for _, lc := range served {
		all = append(all, lc.lat...)
		errs += lc.errs
	}
	slices.Sort(all)
	pct := func(q float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(q*float64(len(all))))].Microseconds())
	}
	steps := float64(len(served)) * float64(n) * float64(b.N)
	b.ReportMetric(steps/b.Elapsed().Seconds(), "envsteps/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(float64(refused), "refused")
	b.ReportMetric(rssMB(), "rss-MB")
}

// rssMB returns the process's resident set size in MiB (0 where /proc is missing).
func rssMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}
