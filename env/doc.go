// Package env is the Yut Nori rules engine: boards as data (the standard
// cross board and lines of spaces, as move tables), a validated rules
// configuration with its variants and presets (Standard, Kata), a game state that is a
// plain value, explicit chance nodes, the 180-action encoding, game records,
// a JSON form of states, versioned save and restore, and text rendering.
//
// The rules are those of docs/RULES.md (the `standard` set) and its named
// variants; "go generate ./env" writes that document from this package's
// tables. A State is small and holds no pointers, so copying it clones it:
// search code copies millions of them. Nothing on the hot path allocates:
// LegalActions appends into the caller's slice, Apply and the throws fill an
// Event value. Loops that play many moves (rollouts) use ApplyTo and
// ApplyThrowTo, which write the Event into one the caller reuses.
//
// A game alternates chance nodes (PhaseThrow) and decisions (PhaseMove).
// Training code lets the state throw with its own seeded generator; search
// code lists ChanceOutcomes and applies each with ApplyThrow.
//
//	s, err := env.New(env.Standard(), 42, env.AnySeat)
//	if err != nil { ... }
//	var buf [env.NumActions]env.Action
//	for !s.IsOver() {
//		s.Advance()                 // throw until a decision (or the end)
//		if s.IsOver() {
//			break
//		}
//		legal := s.LegalActions(buf[:0])
//		ev, err := s.Apply(legal[0]) // an illegal action is an error, the state unchanged
//		if err != nil { ... }
//		fmt.Println(ev)             // "seat 0: gae enters a piece to 2; seat 1 to play"
//	}
//	fmt.Println(s.Winner())
//
// The same seed and the same actions give the same game, bit for bit, on any
// machine and after MarshalBinary and UnmarshalState.
//
// AppendPacked and Unpack give a state a fixed-size binary form (PackedSize
// bytes, without the rules) in which many states travel in one buffer, and
// PositionDesc is a readable position (routes and phase by name) that
// becomes a Position, and then a checked State with FromPosition.
package env

//go:generate sh -c "go run ./internal/genrules > ../docs/RULES.md"
