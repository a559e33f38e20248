// Package israce tells a test whether it was built with the race detector
// (go test -race). The detector slows the code some tenfold and keeps shadow
// memory, so the tests whose point is results at scale trim to a small size
// under it, and those that measure allocations or memory skip; the run
// without it (make test runs both) keeps them at full size. Tests of
// goroutines, servers and cancellation keep running under it.
//
// Usage:
//
//	games := israce.Scale(4000, 400) // 400 under -race: the point is the statistics, not concurrency
//	if israce.Enabled {
//		t.Skip("the race detector allocates")
//	}
package israce
