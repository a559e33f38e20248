package nnet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

func TestAZLoadsAndMatchesItsChecksum(t *testing.T) {
	s, err := AZ()
	require.NoError(t, err)
	assert.LessOrEqual(t, len(azFile), MaxShippedBytes, "the shipped network is at most 5 MB")
	sum := sha256.Sum256(azFile)
	assert.Equal(t, AZChecksum, hex.EncodeToString(sum[:]))
	assert.Equal(t, AZChecksum, s.SHA256)
	onDisk, err := os.ReadFile("shipped/az.ynet")
	require.NoError(t, err)
	assert.Equal(t, onDisk, azFile, "the binary embeds shipped/az.ynet")

	// shipped/az.json describes the file it sits next to.
	var meta struct {
		SHA256, Rules, Tier string
		Bytes               int
		Command             []string
	}
	b, err := os.ReadFile("shipped/az.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &meta))
	assert.Equal(t, AZChecksum, meta.SHA256)
	assert.Equal(t, len(azFile), meta.Bytes)
	assert.Equal(t, s.Net.Rules, meta.Rules)
	assert.Equal(t, s.Net.Tier.String(), meta.Tier)
	require.GreaterOrEqual(t, len(meta.Command), 3, "the command that trained it")
	assert.Contains(t, []string{"yutenv.az.train", "yutenv.az.fit"}, meta.Command[2], "the command that trained it: python -m yutenv.az.train or .fit")

	// AZFile hands out a copy of the checked bytes: changing it changes nothing shipped.
	b, err = AZFile()
	require.NoError(t, err)
	assert.Equal(t, azFile, b)
	b[0] ^= 1
	again, err := AZFile()
	require.NoError(t, err)
	assert.Equal(t, azFile, again)
	assert.NotEqual(t, b, again)
}

func TestParseShippedRefusesTamperedCopies(t *testing.T) {
	flipped := append([]byte(nil), azFile...)
	flipped[len(flipped)/2] ^= 1
	tests := []struct {
		name string
		b    []byte
		sum  string
	}{
		{"a flipped byte", flipped, AZChecksum},
		{"truncated", azFile[:len(azFile)-1], AZChecksum},
		{"empty", nil, AZChecksum},
		{"another declared sum", azFile, hex.EncodeToString(make([]byte, 32))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseShipped(tt.b, tt.sum)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrChecksum)
			assert.ErrorIs(t, err, ErrNet)
		})
	}
	t.Run("too large", func(t *testing.T) {
		big := make([]byte, MaxShippedBytes+1)
		sum := sha256.Sum256(big)
		_, err := ParseShipped(big, hex.EncodeToString(sum[:]))
		assert.ErrorIs(t, err, ErrNet)
		assert.Contains(t, err.Error(), "more than")
	})
	t.Run("the right sum of a file that is not a network", func(t *testing.T) {
		b := []byte("not a network")
		sum := sha256.Sum256(b)
		_, err := ParseShipped(b, hex.EncodeToString(sum[:]))
		assert.ErrorIs(t, err, ErrNet)
		assert.NotErrorIs(t, err, ErrChecksum)
	})
}

// TestAZPlaysEveryRuleSetItAccepts plays az and az,sims=N through every
// variant: legal games to the end under the rules it accepts (at least the
// standard ones), and a clear refusal under every other rule set.
func TestAZPlaysEveryRuleSetItAccepts(t *testing.T) {
	s, err := AZ()
	require.NoError(t, err)
	accepted := 0
	for _, v := range env.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			for _, spec := range []string{"az", "az,sims=16", "az,sims=16,workers=2,gumbel=0"} {
				a, err := agent.New(spec, 7)
				require.NoError(t, err)
				assert.Equal(t, spec, a.Name())
				seats := []agent.Agent{a}
				for len(seats) < v.Rules.Players {
					seats = append(seats, mustAgent(t, "random"))
				}
				res, err := agent.Game{Rules: v.Rules, Seed: 11, Start: env.AnySeat, Seats: seats}.Play()
				if a.(*AZAgent).CheckRules(v.Rules) != nil {
					if err == nil { // az was never asked to decide (every decision of its seat forced): ask it directly
						_, err = a.Act(firstDecision(t, v.Rules))
					}
					require.Error(t, err, "az refuses rules it was not trained for")
					assert.ErrorIs(t, err, ErrRules)
					assert.ErrorIs(t, err, agent.ErrSpec)
					assert.Contains(t, err.Error(), `trained for, "`+s.Rules.String()+`" (tier `+s.Net.Tier.String())
					assert.Contains(t, err.Error(), "observation layout")
					assert.Contains(t, err.Error(), v.Rules.String())
					continue
				}
				require.NoError(t, err, "a legal game under %s", v.Name)
				assert.Positive(t, res.Decisions)
				if spec == "az" {
					accepted++
				}
			}
		})
	}
	assert.Positive(t, accepted, "az plays at least the rules it was trained for")
	assert.NoError(t, (&AZAgent{shipped: s}).CheckRules(env.Standard()), "the shipped network plays the standard rules")
}

func TestAZStatsAndSpecs(t *testing.T) {
	s, err := AZ()
	require.NoError(t, err)
	assert.Equal(t, obs.Compact, s.Net.Tier)
	st := firstDecision(t, env.Standard())
	for _, spec := range []string{"az", "az,sims=32", "az,sims=32,gumbel=0"} {
		a, err := NewAZ(must(agent.ParseSpec(spec)), 1)
		require.NoError(t, err)
		act, stats, err := a.ActStats(st)
		require.NoError(t, err)
		assert.True(t, st.IsLegal(act), spec)
		assert.InDelta(t, 1, sum32(stats.Policy), 1e-4, spec)
	}
	_, err = NewAZ(must(agent.ParseSpec("random")), 1)
	assert.ErrorIs(t, err, agent.ErrSpec)
	assert.Equal(t, agent.SearchBytes(must(agent.ParseSpec("net:x,sims=200,gumbel=1"))), agent.SearchBytes(must(agent.ParseSpec("az,sims=200"))),
		"az's search is bounded like net's")
}

// firstDecision returns the first state of a game under r that waits for a move.
func firstDecision(t *testing.T, r env.Rules) *env.State {
	st, err := env.New(r, 1, 0)
	require.NoError(t, err)
	for st.Phase() != env.PhaseMove {
		_, err := st.SampleThrow()
		require.NoError(t, err)
	}
	return &st
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func sum32(p []float32) float64 {
	s := 0.0
	for _, x := range p {
		s += float64(x)
	}
	return s
}

// TestAZActAllocatesNothing: the rules check keeps the policy's decision
// allocation-free.
func TestAZActAllocatesNothing(t *testing.T) {
	a, err := NewAZ(must(agent.ParseSpec("az")), 1)
	require.NoError(t, err)
	st := firstDecision(t, env.Standard())
	_, err = a.Act(st) // the encoder is built on the first call
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(50, func() { _, _ = a.Act(st) }))
}

// TestNetPlaysOnlyItsRules: a network file records the rules it was
// trained for, and net:PATH plays those alone. Under others it refuses in
// one line, at its first decision and through CheckSpecRules (where a
// server refuses it at make); a file recording no rules plays any.
func TestNetPlaysOnlyItsRules(t *testing.T) {
	for _, tc := range []struct {
		name, recorded, played string
		refused                bool
	}{
		{"its own rules", "pieces=2", "pieces=2", false},
		{"the standard rules", "pieces=2", "standard", true},
		{"a variant", "standard", "kata", true},
		{"no rules recorded", "", "players=3", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := randomNet(3, 16)
			n.Rules = tc.recorded
			path := filepath.Join(t.TempDir(), "n.ynet")
			b, err := n.MarshalBinary()
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b, 0o644))
			played := must(env.ParseRules(tc.played))
			for _, spec := range []string{"net:" + path, "net:" + path + ",sims=8"} {
				sp := must(agent.ParseSpec(spec))
				a, err := agent.New(spec, 1)
				require.NoError(t, err, "the agent is made under any rules")
				_, err = a.Act(firstDecision(t, played))
				checked := CheckSpecRules(sp, played)
				if !tc.refused {
					assert.NoError(t, err, spec)
					assert.NoError(t, checked, spec)
					continue
				}
				for _, e := range []error{err, checked} {
					require.Error(t, e, spec)
					assert.ErrorIs(t, e, ErrRules)
					assert.ErrorIs(t, e, agent.ErrSpec)
					assert.Contains(t, e.Error(), fmt.Sprintf("trained for, %q (tier compact), not %q", tc.recorded, played.String()))
					assert.NotContains(t, e.Error(), "\n")
					assert.NotContains(t, e.Error(), path, "a server's client must not learn its paths")
				}
			}
		})
	}
}
