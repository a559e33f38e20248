// Package obs turns Yut Nori states into fixed-size float32 observations for
// learners, and defines the action codec (180 actions: throw*30 + source).
//
// There are three tiers, each one flat float32 vector whose layout a Space
// describes part by part (name, offset, shape, a name for every channel, row
// and feature, bounds):
//
//   - Compact (213 values): Markov-sufficient and small, for MLPs. Every
//     stack by (station, lane) cell and seat, pieces in hand and finished,
//     seat presence and places, the pool, the phase, the rules, the turns
//     each seat will miss (skip obstacles) and the seat to move.
//   - Tactical (2042 values): Compact, then the opponents' threat on each
//     station, then ten features for each of the 180 actions (legal, enter,
//     moved, captures, finishes, places, joins, shortcut, distance, exposure).
//   - Planes (598 values): 19 channels over the 29 stations (C x 29, for
//     convolutional and graph networks; Adjacency gives the route edges),
//     then 47 global features.
//
// LayoutVersion (2) numbers this layout; datasets and network files record
// it and refuse another.
//
// Every tier is written from the point of view of an observing seat, passed
// to Encode (usually the seat to move, but any seat may observe): that seat
// first, then the others in turn order; legality features are the
// observer's, so they are zero unless it is to move. There is always room for four seats,
// and counts are divided by the number of pieces, so a tier's size is the same
// under every rule set; slots of seats absent from a smaller game are zeros.
// Observations are defined in every phase (chance node, decision, game over),
// and the phase is one of the features.
//
// Usage:
//
//	enc, err := obs.NewEncoder(env.Standard(), obs.Compact)
//	if err != nil { ... }
//	buf := make([]float32, enc.Size())
//	s, _ := env.New(env.Standard(), 1, env.AnySeat)
//	s.Advance()
//	enc.Encode(&s, s.ToMove(), buf) // no allocation; buf now holds the observation
//	for _, p := range enc.Space().Parts { fmt.Println(p.Name, p.Offset, p.Shape) }
//
// docs/OBSERVATIONS.md is generated from the spaces by
// "go generate ./obs" (see internal/gendocs); a test fails when it is stale.
package obs

//go:generate sh -c "go run ./internal/gendocs > ../docs/OBSERVATIONS.md"
