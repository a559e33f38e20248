package grade_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/env/envtest"
	"github.com/yutenv/yutenv/grade"
	"github.com/yutenv/yutenv/solve"
	"github.com/yutenv/yutenv/vecenv"
)

// tableDir holds the solved tables of the package's tests.
var tableDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "grade-test-")
	if err != nil {
		panic(err)
	}
	tableDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kataTable solves the kata once and returns the spec of its optimal agent.
var kataTable = sync.OnceValues(func() (string, error) {
	r, err := env.ParseRules("kata")
	if err != nil {
		return "", err
	}
	tb, err := solve.Solve(r, solve.Options{})
	if err != nil {
		return "", err
	}
	path := filepath.Join(tableDir, "kata.ysolve")
	return "optimal:" + path, tb.Save(path)
})

func optimalKata(t *testing.T) string {
	t.Helper()
	spec, err := kataTable()
	require.NoError(t, err)
	return spec
}

func run(t *testing.T, src grade.Source, ref string, workers int) *grade.Report {
	t.Helper()
	rep, err := grade.Run(context.Background(), src, grade.Options{Reference: ref, Workers: workers, Worst: 3})
	require.NoError(t, err)
	return rep
}

// A reference of the graded agent's own spec, reseeded as the agent was,
// makes the same choices: every loss is 0.
func TestReferenceOwnChoicesLoseNothing(t *testing.T) {
	opt := optimalKata(t)
	for _, tc := range []struct{ rules, spec, opp string }{
		{"standard", "mc:10", "greedy"},
		{"kata", opt, "random"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			rep := run(t, grade.Match{Rules: envtest.Rules(t, tc.rules), Agent: tc.spec, Opponent: tc.opp, Games: 4, Seed: 3}, tc.spec, 2)
			require.Positive(t, rep.Decisions)
			assert.Zero(t, rep.Mean)
			assert.Zero(t, rep.Max)
			assert.Equal(t, rep.Decisions, rep.Best)
			assert.Equal(t, 1.0, rep.BestRate)
		})
	}
}

// The losses rank the agents as perfect play does on the kata: random
// loses most, then greedy, then mc; perfect play loses nothing.
func TestRankingAgainstPerfectPlay(t *testing.T) {
	opt := optimalKata(t)
	rules := envtest.Rules(t, "kata")
	mean := map[string]float64{}
	for _, spec := range []string{"random", "greedy", "mc:50"} {
		rep := run(t, grade.Match{Rules: rules, Agent: spec, Opponent: "greedy", Games: 60, Seed: 1}, opt, 2)
		mean[spec] = rep.Mean
		t.Logf("%-7s %d decisions, %d forced, mean loss %.4f, errors %.1f%%, blunders %.1f%%",
			spec, rep.Decisions, rep.Forced, rep.Mean, 100*rep.ErrorRate, 100*rep.BlunderRate)
		if spec == "random" {
			assert.Positive(t, rep.Errors, "random errs")
			assert.Positive(t, rep.Max)
		}
	}
	assert.Greater(t, mean["random"], mean["greedy"])
	assert.Greater(t, mean["greedy"], mean["mc:50"])
}

// Forced decisions are counted apart and not searched; every decision of
// the graded seat is one or the other.
func TestForcedDecisionsCountedApart(t *testing.T) {
	rules := envtest.Rules(t, "standard")
	m := grade.Match{Rules: rules, Agent: "random", Opponent: "greedy", Games: 6, Seed: 5}
	var p vecenv.Players
	total, forced := 0, 0
	for g := range m.Games {
		ds, err := m.Decisions(&p, g)
		require.NoError(t, err)
		for _, d := range ds {
			require.Equal(t, g%2, d.State.ToMove(), "only the graded seat")
			total++
			if d.State.NumLegalActions() == 1 {
				forced++
			}
		}
	}
	require.Positive(t, forced, "the games have forced decisions")
	rep := run(t, m, "mc:5", 1)
	assert.Equal(t, forced, rep.Forced)
	assert.Equal(t, total-forced, rep.Decisions)
	n := 0
	for _, b := range rep.Histogram {
		n += b.Count
	}
	assert.Equal(t, rep.Decisions, n, "the histogram holds the graded decisions only")

	// A forced decision is not searched: a reference without values grades it.
	s := forcedState(t)
	ref, err := grade.NewReference("greedy")
	require.NoError(t, err)
	g, err := ref.Grade(grade.Decision{State: s, Action: s.LegalActions(nil)[0]})
	require.NoError(t, err)
	assert.True(t, g.Forced)
	assert.Zero(t, g.Loss)
}

func forcedState(t *testing.T) env.State {
	t.Helper()
	p := env.Position{Rules: envtest.Rules(t, "standard"), Phase: env.PhaseMove, Pool: [6]int{env.Do: 1}, Hand: [4]int{4, 4}}
	s, err := env.FromPosition(p, 0)
	require.NoError(t, err)
	require.Equal(t, 1, s.NumLegalActions())
	return s
}

// A Match of one seat plays the balanced match's games of that seat: the
// same decisions, only the graded agent's in that seat.
func TestMatchOfOneSeat(t *testing.T) {
	rules := envtest.Rules(t, "standard")
	both := grade.Match{Rules: rules, Agent: "random", Opponent: "greedy", Games: 6, Seed: 5}
	var p vecenv.Players
	for seat := range 2 {
		one := both
		one.OneSeat, one.Seat = true, seat
		for g := range 3 {
			got, err := one.Decisions(&p, g)
			require.NoError(t, err)
			want, err := both.Decisions(&p, 2*g+seat)
			require.NoError(t, err)
			require.NotEmpty(t, got)
			assert.Equal(t, want, got, "seat %d, game %d", seat, g)
			for _, d := range got {
				assert.Equal(t, seat, d.State.ToMove())
				assert.Equal(t, 2*g+seat, d.Game, "the balanced match's game index")
			}
		}
	}
	bad := both
	bad.OneSeat, bad.Seat = true, 2
	_, err := bad.Decisions(&p, 0)
	assert.ErrorContains(t, err, "seat 2: the rules standard have seats 0..1")
}

// The report does not depend on the workers.
func TestWorkersDoNotChangeTheReport(t *testing.T) {
	m := grade.Match{Rules: envtest.Rules(t, "standard"), Agent: "greedy", Opponent: "random", Games: 4, Seed: 9}
	one := run(t, m, "mc:8", 1)
	three := run(t, m, "mc:8", 3)
	assert.Equal(t, one, three)
}

// Records of the games a Match plays grade as the Match does.
func TestRecordsGradeAsTheMatch(t *testing.T) {
	rules := envtest.Rules(t, "standard")
	m := grade.Match{Rules: rules, Agent: "greedy", Opponent: "mc:5", Games: 4, Seed: 2}
	var recs []*env.Record
	for g := range m.Games {
		a, err := agent.New(m.Agent, 0)
		require.NoError(t, err)
		b, err := agent.New(m.Opponent, 0)
		require.NoError(t, err)
		seats := []agent.Agent{b, b}
		seats[g%2] = a
		game := vecenv.Game(rules, vecenv.GameSeed(m.Seed, g/2), env.AnySeat, seats)
		game.Record = true
		res, err := game.Play()
		require.NoError(t, err)
		recs = append(recs, res.Record)
	}
	want := run(t, m, "mc:6", 2)
	// Seat by seat: the graded agent sat in seat g mod 2.
	var got grade.Report
	for seat := range 2 {
		var mine []*env.Record
		for g, r := range recs {
			if g%2 == seat {
				mine = append(mine, r)
			}
		}
		src, err := grade.NewRecords(mine, nil, rules, seat)
		require.NoError(t, err)
		rep := run(t, src, "mc:6", 2)
		got.Decisions += rep.Decisions
		got.Forced += rep.Forced
		got.Errors += rep.Errors
		got.Mean += rep.Mean * float64(rep.Decisions)
	}
	assert.Equal(t, want.Decisions, got.Decisions)
	assert.Equal(t, want.Forced, got.Forced)
	assert.Equal(t, want.Errors, got.Errors)
	assert.InDelta(t, want.Mean, got.Mean/float64(got.Decisions), 1e-12)

	all, err := grade.NewRecords(recs, nil, rules, -1)
	require.NoError(t, err)
	both := run(t, all, "mc:6", 2)
	assert.Greater(t, both.Decisions+both.Forced, want.Decisions+want.Forced, "every seat's decisions")
}

// illegal always plays action 0 (do@enter... or whatever is not legal).
type illegal struct{ agent.Agent }

func (illegal) ActStats(s *env.State) (env.Action, agent.Stats, error) {
	for a := range env.Action(env.NumActions) {
		if !s.IsLegal(a) {
			return a, agent.Stats{}, nil
		}
	}
	return 0, agent.Stats{}, nil
}

func TestBadInput(t *testing.T) {
	rules := envtest.Rules(t, "standard")
	t.Run("illegal action", func(t *testing.T) {
		m := grade.Match{Rules: rules, Agent: "my-policy", Opponent: "greedy", Games: 2, Seed: 1,
			NewAgent: func() (agent.Agent, error) {
				a, err := agent.New("random", 0)
				return illegal{a}, err
			}}
		_, err := grade.Run(context.Background(), m, grade.Options{Reference: "mc:5", Workers: 1})
		require.ErrorIs(t, err, grade.ErrIllegal)
		assert.Regexp(t, `^illegal action: agent my-policy chose action \d+ \(.*\) at decision \d+ of game 0, seat 0; legal: `, err.Error())
		assert.NotContains(t, err.Error(), "\n")
	})
	t.Run("records of other rules", func(t *testing.T) {
		kata := env.NewRecord(envtest.Rules(t, "kata"), 1, 0)
		_, err := grade.NewRecords([]*env.Record{env.NewRecord(rules, 1, 0), kata}, []string{"a.jsonl, game 0", "a.jsonl, game 1"}, rules, -1)
		require.ErrorIs(t, err, grade.ErrRules)
		assert.Equal(t, "record of other rules: a.jsonl, game 1 is of rules kata, not standard (give --rules kata to grade it)", err.Error())
	})
	t.Run("reference without values", func(t *testing.T) {
		m := grade.Match{Rules: rules, Agent: "random", Opponent: "greedy", Games: 2, Seed: 1}
		_, err := grade.Run(context.Background(), m, grade.Options{Reference: "greedy", Workers: 1})
		require.ErrorIs(t, err, grade.ErrNoValues)
	})
	t.Run("bad reference spec", func(t *testing.T) {
		m := grade.Match{Rules: rules, Agent: "random", Opponent: "greedy", Games: 2, Seed: 1}
		_, err := grade.Run(context.Background(), m, grade.Options{Reference: "mcts:0", Workers: 1})
		require.ErrorIs(t, err, agent.ErrSpec)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		m := grade.Match{Rules: rules, Agent: "random", Opponent: "greedy", Games: 20, Seed: 1}
		_, err := grade.Run(ctx, m, grade.Options{Reference: "mc:5", Workers: 2})
		require.ErrorIs(t, err, grade.ErrCancelled)
	})
}

// The JSON form holds the figures and the worst decisions with their
// positions, which read back as positions of the rules.
func TestReportJSON(t *testing.T) {
	rules := envtest.Rules(t, "standard")
	rep := run(t, grade.Match{Rules: rules, Agent: "random", Opponent: "greedy", Games: 2, Seed: 1}, "mc:5", 2)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"reference", "games", "decisions", "forced", "mean_loss", "median_loss", "p90_loss", "max_loss",
		"mean_loss_se", "mean_loss_low", "mean_loss_high",
		"best", "best_rate", "error_loss", "blunder_loss", "errors", "blunders", "error_rate", "blunder_rate", "histogram", "worst"} {
		assert.Contains(t, m, k)
	}
	require.NotNil(t, rep.MeanSE)
	assert.LessOrEqual(t, *rep.MeanLow, rep.Mean)
	assert.GreaterOrEqual(t, *rep.MeanHigh, rep.Mean)
	assert.Equal(t, []any{*rep.MeanLow, *rep.MeanHigh}, []any{m["mean_loss_low"], m["mean_loss_high"]})

	// One game says nothing of how games vary: no interval, null in JSON.
	one := run(t, grade.Match{Rules: rules, Agent: "random", Opponent: "greedy", Games: 1, Seed: 1}, "mc:5", 1)
	require.Positive(t, one.Decisions)
	assert.Nil(t, one.MeanSE)
	b, err = json.Marshal(one)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"mean_loss_se":null,"mean_loss_low":null,"mean_loss_high":null`)
	assert.Equal(t, "mc:5", m["reference"])
	assert.Len(t, m["histogram"], len(grade.BinEdges)+1)
	worst := m["worst"].([]any)
	require.Len(t, worst, 3)
	w := worst[0].(map[string]any)
	for _, k := range []string{"game", "decision", "seat", "move", "action", "best_move", "best_action", "value", "best_value", "loss", "position"} {
		assert.Contains(t, w, k)
	}
	assert.GreaterOrEqual(t, rep.Worst[0].Loss, rep.Worst[1].Loss)
	assert.InDelta(t, rep.Worst[0].BestValue-rep.Worst[0].Value, rep.Worst[0].Loss, 1e-15)
	assert.Equal(t, rep.Max, rep.Worst[0].Loss)
	p, err := rep.Worst[0].Position.Position(rules)
	require.NoError(t, err)
	s, err := env.FromPosition(p, 0)
	require.NoError(t, err)
	assert.True(t, s.IsLegal(env.Action(rep.Worst[0].MoveID)))
	assert.True(t, s.IsLegal(env.Action(rep.Worst[0].BestID)))
}

func TestHistogramBins(t *testing.T) {
	for _, tc := range []struct {
		loss float64
		bin  string
	}{
		{0, "0"}, {1e-9, "(0, 0.005)"}, {0.005, "[0.005, 0.01)"}, {0.02, "[0.02, 0.05)"},
		{0.0999, "[0.05, 0.1)"}, {0.1, "[0.1, 0.2)"}, {0.5, ">= 0.5"}, {2, ">= 0.5"},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			rep := grade.Summarize([]grade.Graded{{Loss: tc.loss}, {Forced: true}}, "x", 1, 0)
			require.Equal(t, 1, rep.Decisions)
			require.Equal(t, 1, rep.Forced)
			for _, b := range rep.Histogram {
				want := 0
				if b.Label == tc.bin {
					want = 1
				}
				assert.Equal(t, want, b.Count, b.Label)
			}
			assert.Equal(t, tc.loss > grade.ErrorLoss, rep.Errors == 1)
			assert.Equal(t, tc.loss > grade.BlunderLoss, rep.Blunders == 1)
		})
	}
}

func TestQuantiles(t *testing.T) {
	var gs []grade.Graded
	for _, l := range []float64{0.4, 0, 0.1, 0.2, 0.3} {
		gs = append(gs, grade.Graded{Loss: l})
	}
	rep := grade.Summarize(gs, "x", 1, 2)
	assert.InDelta(t, 0.2, rep.Mean, 1e-15)
	assert.InDelta(t, 0.2, rep.Median, 1e-15)
	assert.InDelta(t, 0.36, rep.P90, 1e-15)
	assert.Equal(t, 0.4, rep.Max)
	require.Len(t, rep.Worst, 2)
	assert.Equal(t, []float64{0.4, 0.3}, []float64{rep.Worst[0].Loss, rep.Worst[1].Loss})
	empty := grade.Summarize(nil, "x", 0, 2)
	assert.Zero(t, empty.Mean)
	assert.Empty(t, empty.Worst)
}

// FuzzRecords grades records read from arbitrary bytes: a line that parses
// and replays yields decisions whose actions are legal, and nothing panics.
func FuzzRecords(f *testing.F) {
	rules := env.Standard()
	a, _ := agent.New("greedy", 1)
	game := vecenv.Game(rules, 7, env.AnySeat, []agent.Agent{a, a})
	game.Record = true
	res, err := game.Play()
	if err != nil {
		f.Fatal(err)
	}
	b, err := json.Marshal(res.Record)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"format":"yutenv-record","version":1,"rules":{},"seed":1,"start":0,"steps":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := env.ParseRecord(b)
		if err != nil {
			return
		}
		src, err := grade.NewRecords([]*env.Record{rec}, nil, rules, -1)
		if err != nil {
			if !errors.Is(err, grade.ErrRules) {
				t.Fatalf("NewRecords: %v", err)
			}
			return
		}
		ds, err := src.Decisions(nil, 0)
		if err != nil {
			return
		}
		for _, d := range ds {
			if !d.State.IsLegal(d.Action) {
				t.Fatalf("decision %d: action %v not legal", d.State.Decisions(), d.Action)
			}
		}
	})
}
