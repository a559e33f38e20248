package env

import "math/rand/v2"

// RandomPlayout plays s to the end with uniformly random legal actions drawn
// from rng, throwing with the state's own generator, and returns the number
// of decisions made. maxDecisions > 0 stops a game that runs longer (the
// state is then left unfinished). It allocates nothing.
func RandomPlayout(s *State, rng *rand.Rand, maxDecisions int) int {
	var buf [NumActions]Action
	n := 0
	for {
		s.Advance()
		if s.phase != PhaseMove || (maxDecisions > 0 && n >= maxDecisions) {
			return n
		}
		legal := s.LegalActions(buf[:0])
		if _, err := s.Apply(legal[rng.IntN(len(legal))]); err != nil {
			panic("env: legal action refused: " + err.Error()) // an engine bug, never input
		}
		n++
	}
}
