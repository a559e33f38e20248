package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/yutenv/yutenv/internal/userfile"
	"github.com/yutenv/yutenv/luck"
)

// ladderStateFormat names the state file format.
const ladderStateFormat = "yutenv-ladder-state"

// ladderStateVersion is the state file format's version this yutenv
// writes: version 2 added the checksum (ladderState.SHA256), version 3 the
// luck (the ladder's value function, and each game's luck).
const ladderStateVersion = 3

// ladderStateLuckless is the version before the luck, still continued
// (without luck-adjusted ratings: its games' luck was not counted).
const ladderStateLuckless = 2

// ladderStateUnsummed is the oldest version, without a checksum either,
// still continued (with a warning: its damage cannot be detected).
const ladderStateUnsummed = 1

// ladderLuckScale is the unit of a game's luck in the state: luck is
// stored as an integer count of 1e-9 outcome units.
const ladderLuckScale = 1e9

// ladderLuckMax bounds a stored game's luck, in stored units: a game's luck
// is a sum of differences of values in [-1, 1], one per throw, and no game
// throws 10^4 times.
const ladderLuckMax = 2e4 * ladderLuckScale

// Sizes bounding a state file by what its ladder can hold
// (ladderStateBound), as save writes it: compact JSON.
const (
	// ladderGameBytes bounds one finished game: seven int64s of at most 20
	// characters ("-9223372036854775808"), six commas, two brackets and
	// the comma before the next game.
	ladderGameBytes = 7*20 + 6 + 2 + 1
	// ladderPairBytes bounds a pair's brackets and the comma after them.
	ladderPairBytes = 3
	// ladderHeadBytes bounds the rest: the keys, the format name, the
	// version, the checksum and the newline, with ample room.
	ladderHeadBytes = 1024
	// ladderKeyEscape is the most bytes a character of the key may take in
	// the file (a JSON escape \u00XX spells one byte in six).
	ladderKeyEscape = 6
)

// ladderSaveEvery is the longest time finished games wait to be saved.
const ladderSaveEvery = 2 * time.Second

// ErrLadderState is wrapped by the errors of a state file that cannot be
// used: not a ladder state, damaged, or made by a different ladder.
var ErrLadderState = errors.New("ladder state file")

// ladderKey is what makes two ladders the same one: a state file continues
// only the ladder it was made by.
type ladderKey struct {
	Agents []string `json:"agents"`
	Rules  string   `json:"rules"`
	Games  int      `json:"games"`
	Seed   uint64   `json:"seed"`
	// Luck names the value function the games' luck is counted with
	// (--luck: az, progress), or "off"; empty in states before version 3.
	Luck string `json:"luck,omitempty"`
}

func (k ladderKey) equal(o ladderKey) bool {
	if k.Rules != o.Rules || k.Games != o.Games || k.Seed != o.Seed || k.Luck != o.Luck || len(k.Agents) != len(o.Agents) {
		return false
	}
	for i := range k.Agents {
		if k.Agents[i] != o.Agents[i] {
			return false
		}
	}
	return true
}

// ladderGame is one finished game of a pair: game index, whether agent A
// won (1) or not (0), both agents' decisions and nanoseconds of thinking,
// and A's luck in units of 1/ladderLuckScale (0 when the ladder counts
// none; states before version 3 have six numbers).
type ladderGame [7]int64

// luck is A's luck in the game, in outcome units.
func (g ladderGame) luck() float64 { return float64(g[6]) / ladderLuckScale }

// ladderState is the resumable state: the ladder's key and the finished
// games of each pair (pairs in the order of ladderPairs).
type ladderState struct {
	Format  string         `json:"format"`
	Version int            `json:"version"`
	Key     ladderKey      `json:"ladder"`
	Pairs   [][]ladderGame `json:"pairs"`
	// SHA256 is the hex SHA-256 of the state's canonical content
	// (ladderState.sum), so that damage that leaves valid JSON (a winner
	// flipped) is refused rather than rated. Empty in version 1.
	SHA256 string `json:"sha256,omitempty"`
}

// ladderStateV2 is a version 2 state's content as it was summed: games
// of six numbers.
type ladderStateV2 struct {
	Format  string       `json:"format"`
	Version int          `json:"version"`
	Key     ladderKey    `json:"ladder"`
	Pairs   [][][6]int64 `json:"pairs"`
	SHA256  string       `json:"sha256,omitempty"`
}

// sum returns the hex SHA-256 of the state's canonical content: its
// compact JSON (encoding/json, fields in declaration order) without the
// checksum itself.
func (st *ladderState) sum() string {
	c := *st
	c.SHA256 = ""
	var v any = &c
	if c.Version < ladderStateVersion { // its games had six numbers, and it was summed so
		old := ladderStateV2{Format: c.Format, Version: c.Version, Key: c.Key, Pairs: make([][][6]int64, len(c.Pairs))}
		for p, games := range c.Pairs {
			old.Pairs[p] = make([][6]int64, len(games))
			for i, g := range games {
				copy(old.Pairs[p][i][:], g[:6])
			}
		}
		v = &old
	}
	b, err := json.Marshal(v)
	if err != nil { // a struct of strings and integers always encodes
		panic(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ladderStateBound is the largest state file the ladder key can have
// written: its header, its key (each byte escaped at worst) and every
// game of every pair at the widest. A larger file is refused before it is
// read: decoding costs about 18 times a file's size in memory, so the
// bound keeps a state of this ladder's own size the only one decoded.
func ladderStateBound(key ladderKey) int64 {
	kb, _ := json.Marshal(key)
	pairs := int64(len(key.Agents)) * int64(len(key.Agents)-1) / 2
	return ladderHeadBytes + ladderKeyEscape*int64(len(kb)) + pairs*(ladderPairBytes+int64(key.Games)*ladderGameBytes)
}

// loadLadderState reads the state file at path for the ladder key, or
// starts a new state when the file does not exist (or path is empty). A
// version 1 state (no checksum) is continued with a warning on warn (nil:
// none), and saved as the current version. With luckGiven false (--luck
// not given) the state's own luck value function is kept whatever key
// says; a state from before the luck (versions 1 and 2) is continued with
// luck off, or refused when luck was asked for.
func loadLadderState(path string, key ladderKey, luckGiven bool, warn io.Writer) (*ladderState, error) {
	st := &ladderState{Format: ladderStateFormat, Version: ladderStateVersion, Key: key,
		Pairs: make([][]ladderGame, len(ladderPairs(len(key.Agents))))}
	if path == "" {
		return st, nil
	}
	b, err := readStateFile(path, key)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	old, err := decodeLadderState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if old.Version < ladderStateVersion {
		if luckGiven && key.Luck != luck.NameOff {
			return nil, fmt.Errorf("%s: %w: version %d was played before games' luck was counted, so --luck %s cannot continue it; continue it with --luck off, or delete it",
				path, ErrLadderState, old.Version, key.Luck)
		}
		old.Key.Luck = luck.NameOff
		if !luckGiven && key.Luck != luck.NameOff && warn != nil {
			fmt.Fprintf(warn, "ladder: %s was played before games' luck was counted (version %d); continuing it without luck-adjusted ratings (--luck off)\n", path, old.Version)
		}
	}
	if !luckGiven {
		key.Luck = old.Key.Luck
	}
	if !old.Key.equal(key) {
		return nil, fmt.Errorf("%s: %w: it was made by a different ladder (agents %q, rules %s, %d games per pair, seed %d, luck %s; this one: agents %q, rules %s, %d games, seed %d, luck %s); delete it or give another --state",
			path, ErrLadderState, old.Key.Agents, old.Key.Rules, old.Key.Games, old.Key.Seed, old.Key.Luck, key.Agents, key.Rules, key.Games, key.Seed, key.Luck)
	}
	if old.Version == ladderStateUnsummed {
		if warn != nil {
			fmt.Fprintf(warn, "ladder: warning: %s: %s version %d has no checksum, so damage to it cannot be detected; continuing it, saved as version %d (with one)\n",
				path, ErrLadderState, ladderStateUnsummed, ladderStateVersion)
		}
	}
	old.Version = ladderStateVersion
	return old, nil
}

// readStateFile reads the regular file at path if it has at most the
// bytes a state of the ladder key can have (ladderStateBound). The size is checked on the open file before anything is read,
// and the read stops past limit, so a file that grows meanwhile is refused
// too; a FIFO or a device is refused without blocking.
func readStateFile(path string, key ladderKey) ([]byte, error) {
	limit := ladderStateBound(key)
	f, fi, err := userfile.Open(path)
	if errors.Is(err, userfile.ErrNotRegular) {
		return nil, fmt.Errorf("%w: %w", ErrLadderState, err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w: it has %d bytes, more than the %d bytes a state of this ladder (%d agents, %d games per pair) can have; delete it or give another --state",
			ErrLadderState, fi.Size(), limit, len(key.Agents), key.Games)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: it grew past the %d bytes a state of this ladder can have while it was read", ErrLadderState, limit)
	}
	return b, nil
}

// decodeLadderState parses and checks a state file: a well-formed state of
// a version this yutenv reads, whose checksum (version 2) matches and
// whose games are each in range and recorded once.
func decodeLadderState(b []byte) (*ladderState, error) {
	var st ladderState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLadderState, err)
	}
	switch {
	case st.Format != ladderStateFormat || st.Version < ladderStateUnsummed || st.Version > ladderStateVersion:
		return nil, fmt.Errorf("%w: format %q version %d; this yutenv reads %q versions %d to %d", ErrLadderState, st.Format, st.Version,
			ladderStateFormat, ladderStateUnsummed, ladderStateVersion)
	case st.Version == ladderStateUnsummed && st.SHA256 != "":
		return nil, fmt.Errorf("%w: version %d with a checksum, which that version does not have (damaged)", ErrLadderState, st.Version)
	case st.Version > ladderStateUnsummed && st.SHA256 == "":
		return nil, fmt.Errorf("%w: it has no SHA-256 checksum, which version %d must have (damaged or edited by hand); delete it or give another --state", ErrLadderState, st.Version)
	case st.Version > ladderStateUnsummed && st.SHA256 != st.sum():
		return nil, fmt.Errorf("%w: its SHA-256 checksum does not match its content (damaged or edited by hand); delete it or give another --state", ErrLadderState)
	case st.Version < ladderStateVersion && st.Key.Luck != "":
		return nil, fmt.Errorf("%w: version %d names a luck value function, which that version does not have (damaged)", ErrLadderState, st.Version)
	case st.Version == ladderStateVersion && st.Key.Luck != luck.NameOff && st.Key.Luck != luck.NameAZ && st.Key.Luck != luck.NameProgress:
		return nil, fmt.Errorf("%w: luck %q; this yutenv counts luck with %s, %s or %s", ErrLadderState, st.Key.Luck, luck.NameAZ, luck.NameProgress, luck.NameOff)
	}
	k := st.Key
	if len(k.Agents) < 2 || len(k.Agents) > 1000 || k.Games < 1 || k.Games > 10_000_000 {
		return nil, fmt.Errorf("%w: %d agents, %d games per pair", ErrLadderState, len(k.Agents), k.Games)
	}
	if len(st.Pairs) != len(k.Agents)*(len(k.Agents)-1)/2 {
		return nil, fmt.Errorf("%w: %d pairs for %d agents", ErrLadderState, len(st.Pairs), len(k.Agents))
	}
	for p, games := range st.Pairs {
		if len(games) > k.Games {
			return nil, fmt.Errorf("%w: pair %d has %d games, more than %d", ErrLadderState, p, len(games), k.Games)
		}
		seen := make(map[int64]bool, len(games))
		for _, g := range games {
			if g[0] < 0 || g[0] >= int64(k.Games) || seen[g[0]] || g[1] < 0 || g[1] > 1 || g[2] < 0 || g[3] < 0 || g[4] < 0 || g[5] < 0 ||
				g[6] < -ladderLuckMax || g[6] > ladderLuckMax || g[6] != 0 && (st.Version < ladderStateVersion || k.Luck == luck.NameOff) {
				return nil, fmt.Errorf("%w: pair %d: bad game %v", ErrLadderState, p, g)
			}
			seen[g[0]] = true
		}
	}
	return &st, nil
}

// save writes the state atomically to path (nothing when path is empty).
func (st *ladderState) save(path string) error {
	if path == "" {
		return nil
	}
	st.SHA256 = st.sum()
	if err := writeAtomic(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(st) }); err != nil {
		return fmt.Errorf("saving the ladder state: %w", err)
	}
	return nil
}

// writeAtomic writes a file through write under a temporary name and
// renames it into place, so readers see the old file or the new one; a
// target that is not a regular file is refused (userfile.WriteAtomic).
func writeAtomic(path string, write func(io.Writer) error) error {
	return userfile.WriteAtomic(path, write)
}

// checkOutputs refuses, before any work, an output flag (name, path
// pairs; an empty path is no output) whose file exists and is not a
// regular file (userfile.Target): writeAtomic would refuse it at the end.
func checkOutputs(flagPaths ...string) error {
	for i := 0; i+1 < len(flagPaths); i += 2 {
		if p := flagPaths[i+1]; p != "" && p != "-" {
			if _, err := userfile.Target(p); err != nil {
				return fmt.Errorf("%s: %w", flagPaths[i], err)
			}
		}
	}
	return nil
}

// played counts the finished games of the state.
func (st *ladderState) played() int {
	n := 0
	for _, g := range st.Pairs {
		n += len(g)
	}
	return n
}
