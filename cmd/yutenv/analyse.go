package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/olekukonko/tablewriter"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/internal/userfile"
)

func init() {
	commands["analyse"] = command{summary: "ask an agent for its move, policy and value at a position", run: runAnalyse}
}

const analyseArgs = `(--position FILE | --state FILE | --record FILE [--game G] [--decision D | --step K]) [flags]

Shows what an agent (default mcts:400) plays at one decision: its action, its
search policy over the legal actions (visit fractions for mcts) and its value
estimate for the seat to move, as a table or, with --json, one JSON object.

The position comes from one of:
  --position FILE  a readable position as JSON (docs/FORMATS.md, "Readable
                   position"): {"to_move", "phase", "pool", "stacks", ...},
                   under --rules
  --state FILE     a saved state (yutenv.State.serialize, or the server's save)
  --record FILE    a game record (selfplay --out): game --game at its decision
                   --decision D (0-based), or the state after --step K steps
                   (throws and moves both count; it must be a decision);
                   default: the game's last decision`

// analyseResult is what "yutenv analyse --json" prints.
type analyseResult struct {
	Agent    string           `json:"agent"`
	Seat     int              `json:"seat"`
	Action   int              `json:"action"`
	Move     string           `json:"move"`
	Value    float64          `json:"value"`
	Values   []float64        `json:"values"`
	Policy   []analysePolicy  `json:"policy"`
	Position env.PositionDesc `json:"position"`
	State    env.StateJSON    `json:"state"`
}

// analysePolicy is one legal action with its policy weight.
type analysePolicy struct {
	Action int     `json:"action"`
	Move   string  `json:"move"`
	P      float64 `json:"p"`
}

func runAnalyse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("analyse", analyseArgs, stderr)
	posFile := fs.String("position", "", "a readable position as JSON (`FILE`)")
	stateFile := fs.String("state", "", "a saved state (`FILE`)")
	recFile := fs.String("record", "", "a game record file (`FILE`, JSON lines)")
	game := fs.Int("game", 0, "which game of the record file (0-based)")
	step := fs.Int("step", -1, "the state after this many steps of the record, throws and moves (-1: the last decision)")
	decision := fs.Int("decision", -1, "the record's D-th decision (0-based; -1: the last decision)")
	rulesSpec := fs.String("rules", "standard", "rules of a --position")
	spec := fs.String("agent", "mcts:400", "agent `SPEC`")
	takesSpecs(fs, "agent")
	seed := fs.Uint64("seed", 1, "the agent's seed")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	rules, err := parseCommand(fs, args, rulesSpec)
	if err != nil {
		return err
	}
	given := 0
	for _, f := range []string{*posFile, *stateFile, *recFile} {
		if f != "" {
			given++
		}
	}
	if given != 1 {
		fs.Usage()
		return fmt.Errorf("give exactly one of --position, --state and --record")
	}
	var s env.State
	switch {
	case *posFile != "":
		s, err = readPosition(*posFile, rules)
	case *stateFile != "":
		s, err = readState(*stateFile)
	case *step >= 0 && *decision >= 0:
		return fmt.Errorf("give --decision or --step, not both")
	default:
		s, err = recordState(*recFile, *game, *step, *decision)
	}
	if err != nil {
		return err
	}
	if s.Phase() != env.PhaseMove {
		return fmt.Errorf("the position is in phase %s: an agent acts only at a decision (phase move)", s.Phase())
	}
	ag, err := agent.New(*spec, *seed)
	if err != nil {
		return err
	}
	a, st, err := ag.ActStats(&s)
	if err != nil {
		return err
	}
	res := analyseResult{Agent: ag.Name(), Seat: s.ToMove(), Action: int(a), Move: a.String(), Value: st.Value,
		Values: st.Values[:s.Rules().Players], Position: env.Describe(s.Position()), State: s.JSON()}
	for _, l := range s.LegalActions(nil) {
		p := 0.0
		if st.Policy != nil {
			p = float64(st.Policy[l])
		} else if l == a {
			p = 1
		}
		res.Policy = append(res.Policy, analysePolicy{Action: int(l), Move: l.String(), P: p})
	}
	sort.SliceStable(res.Policy, func(i, j int) bool { return res.Policy[i].P > res.Policy[j].P })
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprint(stdout, s.Render())
	fmt.Fprintf(stdout, "\n%s plays %s (action %d) for seat %d; value %+.3f\n\n", res.Agent, res.Move, res.Action, res.Seat, res.Value)
	t := tablewriter.NewWriter(stdout)
	t.SetAutoFormatHeaders(false)
	t.SetHeader([]string{"action", "move", "policy"})
	for _, p := range res.Policy {
		t.Append([]string{fmt.Sprint(p.Action), p.Move, fmt.Sprintf("%.3f", p.P)})
	}
	t.Render()
	return nil
}

// maxInputFile bounds the position and state files analyse reads.
const maxInputFile = 1 << 20

// readSmall reads a file of at most maxInputFile bytes.
func readSmall(name string) ([]byte, error) {
	f, _, err := userfile.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxInputFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxInputFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxInputFile)
	}
	return b, nil
}

// readPosition reads a readable position (JSON) under rules r.
func readPosition(name string, r env.Rules) (env.State, error) {
	b, err := readSmall(name)
	if err != nil {
		return env.State{}, err
	}
	var d env.PositionDesc
	if err := strictJSON(b, &d); err != nil {
		return env.State{}, fmt.Errorf("%s: %w", name, err)
	}
	p, err := d.Position(r)
	if err != nil {
		return env.State{}, fmt.Errorf("%s: %w", name, err)
	}
	s, err := env.FromPosition(p, 0)
	if err != nil {
		return env.State{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// strictJSON decodes one JSON value, refusing unknown fields.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytesReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// readState reads a saved state blob.
func readState(name string) (env.State, error) {
	b, err := readSmall(name)
	if err != nil {
		return env.State{}, err
	}
	s, err := env.UnmarshalState(b)
	if err != nil {
		return env.State{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// errStop ends a replay early.
var errStop = errors.New("stop")

// recordState replays game g of a record file to its decision d, or up to
// step k (with neither, d = k = -1: to its last decision). A step that ends
// at a chance node is an error that names the decisions around it.
func recordState(name string, g, k, d int) (env.State, error) {
	f, _, err := userfile.Open(name)
	if err != nil {
		return env.State{}, err
	}
	defer f.Close()
	recs, err := env.ReadRecords(f)
	if err != nil {
		return env.State{}, fmt.Errorf("%s: %w", name, err)
	}
	if g < 0 || g >= len(recs) {
		return env.State{}, fmt.Errorf("--game %d out of range: the file holds %d games", g, len(recs))
	}
	rec := recs[g]
	if k < -1 || k > len(rec.Steps) {
		return env.State{}, fmt.Errorf("--step %d out of range: game %d has %d steps", k, g, len(rec.Steps))
	}
	var at, lastDecision env.State
	decisions := 0
	var before, after int = -1, -1 // the decision steps around a chance-node step k
	reached := false
	_, err = rec.Replay(func(i int, _ env.Event, s *env.State) error {
		step := i + 1
		if s.Phase() == env.PhaseMove {
			lastDecision = *s
			if d >= 0 && decisions == d {
				at, reached = *s, true
				return errStop
			}
			decisions++
			if step < k {
				before = step
			} else if step > k && after < 0 {
				after = step
			}
		}
		if k >= 0 && step == k {
			at, reached = *s, true
		}
		if reached && k >= 0 && (s.Phase() == env.PhaseMove || after >= 0) {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return env.State{}, fmt.Errorf("%s: game %d: %w", name, g, err)
	}
	switch {
	case d >= 0 && !reached:
		return env.State{}, fmt.Errorf("--decision %d out of range: game %d has %d decisions", d, g, decisions)
	case k >= 0 && at.Phase() != env.PhaseMove:
		near := "no decision comes after it"
		if after >= 0 {
			near = fmt.Sprintf("the next decision is at --step %d", after)
		}
		if before >= 0 {
			near += fmt.Sprintf(", the one before at --step %d", before)
		}
		return env.State{}, fmt.Errorf("--step %d of game %d is a %s, not a decision (%s; or name decisions with --decision D)", k, g, at.Phase(), near)
	case reached:
		return at, nil
	case decisions == 0:
		return env.State{}, fmt.Errorf("%s: game %d has no decision", name, g)
	}
	return lastDecision, nil
}

// bytesReader wraps b as an io.Reader.
func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
