package luck

import (
	"fmt"
	"math"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/nnet"
)

// Progress is the heuristic value of the race, for any rules: a seat's
// progress is the fraction of all its pieces' steps covered (a finished
// piece all, a piece in hand none), plus, for the seat to move, the steps
// of the throws it holds in its pool; its value is
// tanh(ProgressGain × (its progress − the mean progress of the others)).
// It works at any state, chance nodes included.
type Progress struct{}

// ProgressGain scales Progress's lead before tanh: a lead of a quarter of
// the race is worth about +0.46.
const ProgressGain = 2

// Name is "progress".
func (Progress) Name() string { return "progress" }

// Values writes every seat's progress value at s.
func (Progress) Values(s *env.State, v *[env.MaxPlayers]float64) error {
	r := s.Rules()
	full := float64(r.LapSteps())
	var prog [env.MaxPlayers]float64
	for p := 0; p < r.Players; p++ {
		prog[p] = float64(s.Finished(p)) * full
	}
	for st := env.Station(0); st < env.NumStations; st++ {
		if seat, h, route, ok := s.StackAt(st); ok {
			prog[seat] += float64(h) * (full - float64(r.StepsToFinish(st, route)))
		}
	}
	pool := s.Pool()
	for t, n := range pool {
		prog[s.ToMove()] += float64(n) * float64(env.Throw(t).Steps())
	}
	var total float64
	for p := 0; p < r.Players; p++ {
		prog[p] /= full * float64(r.Pieces)
		total += prog[p]
	}
	for p := range v {
		v[p] = 0
		if p < r.Players {
			others := (total - prog[p]) / float64(r.Players-1)
			v[p] = math.Tanh(ProgressGain * (prog[p] - others))
		}
	}
	return nil
}

// Net is the value head of a network, for two seats: the seat to move's
// value, and its negation for the other seat.
type Net struct {
	name   string
	e      *nnet.Evaluator
	priors [env.NumActions]float32
}

// NewNet returns the value of network n under the name name. Each Net
// evaluates on its own (give each goroutine its own).
func NewNet(name string, n *nnet.Net) *Net {
	return &Net{name: name, e: nnet.NewCachingEvaluator(n, 4096)}
}

// AZ returns the value of the shipped network az, and the rules it was
// trained for (the only ones it values).
func AZ() (*Net, env.Rules, error) {
	s, err := nnet.AZ()
	if err != nil {
		return nil, env.Rules{}, err
	}
	return NewNet(nnet.AZName, s.Net), s.Rules, nil
}

// Name is the network's name.
func (n *Net) Name() string { return n.name }

// Values writes both seats' values at the decision s.
func (n *Net) Values(s *env.State, v *[env.MaxPlayers]float64) error {
	if s.Rules().Players != 2 {
		return fmt.Errorf("luck: value %s needs two seats, not %d", n.name, s.Rules().Players)
	}
	x, err := n.e.Evaluate(s, n.priors[:])
	if err != nil {
		return err
	}
	*v = [env.MaxPlayers]float64{}
	m := s.ToMove()
	v[m], v[1-m] = x, -x
	return nil
}
