package env

// Perft counts the paths of exactly depth steps from s, where a step is one
// outcome at a chance node (every throw with a non-zero probability) or one
// legal action at a decision. A game that ends before depth contributes no
// path, as in chess perft. Golden counts of Perft catch a wrong move
// generator or a wrong rule.
func Perft(s State, depth int) uint64 {
	if depth == 0 {
		return 1
	}
	var n uint64
	switch s.phase {
	case PhaseThrow:
		for t := Throw(0); t < NumThrows; t++ {
			c := s
			if _, err := c.ApplyThrow(t); err != nil {
				continue // impossible under the rules (back-do when off) or a full pool
			}
			n += Perft(c, depth-1)
		}
	case PhaseMove:
		var buf [NumActions]Action
		for _, a := range s.LegalActions(buf[:0]) {
			c := s
			if _, err := c.Apply(a); err != nil {
				panic("env: legal action refused: " + err.Error()) // a bug in the engine, never input
			}
			n += Perft(c, depth-1)
		}
	}
	return n
}

// DivideEntry is one first step of a Divide and the paths under it.
type DivideEntry struct {
	Chance bool   // the step was a throw outcome
	Throw  Throw  // the outcome, when Chance
	Action Action // the action, when not Chance
	Count  uint64 // paths of depth-1 steps after it
}

// Divide splits Perft(s, depth) by first step, to find where two move
// generators disagree.
func Divide(s State, depth int) []DivideEntry {
	var out []DivideEntry
	if depth == 0 {
		return out
	}
	switch s.phase {
	case PhaseThrow:
		for t := Throw(0); t < NumThrows; t++ {
			c := s
			if _, err := c.ApplyThrow(t); err != nil {
				continue
			}
			out = append(out, DivideEntry{Chance: true, Throw: t, Count: Perft(c, depth-1)})
		}
	case PhaseMove:
		for _, a := range s.LegalActions(nil) {
			c := s
			if _, err := c.Apply(a); err != nil {
				panic("env: legal action refused: " + err.Error())
			}
			out = append(out, DivideEntry{Action: a, Count: Perft(c, depth-1)})
		}
	}
	return out
}
