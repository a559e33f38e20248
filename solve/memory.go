package solve

import (
	"fmt"
	"math"

	"github.com/yutenv/yutenv/env"
)

// The memory a solve needs: its estimate, made before the solve starts,
// and byte counts written for people.

// The constants of EstimateBytes, measured (docs/BASELINES.md).
const (
	// estimateBytes is the peak resident memory of a solve per state:
	// 5.2 to 5.6 GiB for the 53.6 million states of pieces=2 on the cross.
	estimateBytes = 110
	// statesPerPlacing is the ratio of reachable states to placings of
	// the pieces (both seats to move) without a pool: 2.3 on the kata.
	statesPerPlacing = 2.5
	// statesPerPlacingPiece is the same ratio with a pool, per piece a
	// seat: the pools that are not sure wins grow with the pieces they
	// must bring home (7.8 for pieces=1 on the cross, 17.9 for pieces=2).
	statesPerPlacingPiece = 9.0
)

// EstimateBytes returns an estimate of the memory Solve needs for rules r
// with pool cap poolCap (0: DefaultPoolCap): the ways to place both seats'
// pieces (stations with routes, hand, finished), times the ratio of
// reachable states to these measured on the solved variants (with a pool,
// a ratio per piece), times the peak memory of a state. Pools long enough
// to reach the cap are almost all sure wins, which the solver does not
// list, so the estimate does not grow with the cap. Solve refuses a
// variant whose estimate exceeds its bound before it starts, and stops
// with ErrTooBig if its tables pass the bound while it lists the states.
func EstimateBytes(r env.Rules, poolCap int) (int64, error) {
	if err := Check(r); err != nil {
		return 0, err
	}
	c, err := newCodec(r)
	if err != nil {
		return 0, err
	}
	if poolCap < 0 || poolCap > MaxPoolCap {
		return 0, fmt.Errorf("%w: pool cap %d out of range 1..%d", ErrUnsupported, poolCap, MaxPoolCap)
	}
	ratio := statesPerPlacing
	if r.Pool == env.SwitchOn {
		ratio = statesPerPlacingPiece * float64(r.Pieces)
	}
	seat := binomial(len(c.places)+2+r.Pieces-1, r.Pieces) // multisets of pieces over places, hand, finished
	n := 2 * seat * seat * ratio
	if n*estimateBytes > math.MaxInt64/2 {
		return math.MaxInt64 / 2, nil
	}
	return int64(n * estimateBytes), nil
}

// fitsMachine refuses, wrapping ErrTooBig, an estimate of est bytes for
// rules r above the machine's memory: machine bytes, or when machine is 0
// the physical memory MachineBytes reads (no check where it reads none, or
// when machine is negative).
func fitsMachine(r env.Rules, est, machine int64) error {
	if machine == 0 {
		machine, _ = MachineBytes()
	}
	if machine <= 0 || est <= machine {
		return nil
	}
	return fmt.Errorf("%w: rules %s need about %s (an estimate from the ways to place the pieces), more than this machine's %s of memory",
		ErrTooBig, r, FormatBytes(est), FormatBytes(machine))
}

// binomial returns n choose k as a float64 (it may be large).
func binomial(n, k int) float64 {
	b := 1.0
	for i := 1; i <= k; i++ {
		b = b * float64(n-k+i) / float64(i)
	}
	return b
}

// FormatBytes writes a byte count for people: "512 B", "3.2 MiB", "1.5 GiB".
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
