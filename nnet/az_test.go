package nnet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/obs"
)

// testShipped are networks registered as shipped in this package's tests
// alone (the production table, shippedTable, holds only real networks):
// a small one trained for other rules than az's, so that every test over
// ShippedNames covers a second name, and one whose declared SHA-256 its
// bytes do not have.
var testShipped = []struct {
	name, rules string
	tampered    bool
}{
	{"aztest", "pieces=2,flat_prob=0.5", false},
	{"aztampered", "standard", true},
}

func init() {
	for i, ts := range testShipped {
		n := randomNet(uint64(40+i), 8)
		n.Rules = ts.rules
		b := must(n.MarshalBinary())
		h := sha256.Sum256(b)
		sum := hex.EncodeToString(h[:])
		if ts.tampered {
			b[len(b)/2] ^= 1
		}
		registerShipped(ts.name, sum, b)
	}
}

// playable lists the shipped names whose network loads: all but the
// tampered test registration.
func playable() []string {
	var out []string
	for _, name := range ShippedNames() {
		if name != "aztampered" {
			out = append(out, name)
		}
	}
	return out
}

// azFile is the embedded file of agent az.
func azFile(t *testing.T) []byte {
	b, err := shippedFiles.ReadFile("shipped/az.ynet")
	require.NoError(t, err)
	return b
}

// TestShippedFilesMatchTheirDeclarations holds every network of the
// production table to its declared SHA-256 and to its record
// shipped/NAME.json, and the folder shipped/ to the table.
func TestShippedFilesMatchTheirDeclarations(t *testing.T) {
	declared := map[string]bool{}
	for _, d := range shippedTable {
		declared[d.name] = true
		t.Run(d.name, func(t *testing.T) {
			s, err := ShippedNet(d.name)
			require.NoError(t, err)
			assert.Equal(t, d.name, s.Name)
			embedded, err := shippedFiles.ReadFile("shipped/" + d.name + ".ynet")
			require.NoError(t, err)
			assert.LessOrEqual(t, len(embedded), MaxShippedBytes, "a shipped network is at most 5 MB")
			sum := sha256.Sum256(embedded)
			assert.Equal(t, d.sha256, hex.EncodeToString(sum[:]))
			assert.Equal(t, d.sha256, s.SHA256)
			onDisk, err := os.ReadFile(filepath.Join("shipped", d.name+".ynet"))
			require.NoError(t, err)
			assert.Equal(t, onDisk, embedded, "the binary embeds shipped/%s.ynet", d.name)

			// shipped/NAME.json describes the file it sits next to.
			var meta struct {
				SHA256, Rules, Tier string
				Bytes               int
				Hidden              []int
				Command             []string
			}
			b, err := os.ReadFile(filepath.Join("shipped", d.name+".json"))
			require.NoError(t, err, "every shipped network has its record")
			require.NoError(t, json.Unmarshal(b, &meta))
			assert.Equal(t, d.sha256, meta.SHA256)
			assert.Equal(t, len(embedded), meta.Bytes)
			assert.Equal(t, s.Net.Rules, meta.Rules)
			assert.Equal(t, s.Net.Tier.String(), meta.Tier)
			var hidden []int
			for _, l := range s.Net.Trunk {
				hidden = append(hidden, l.Out)
			}
			assert.Equal(t, hidden, meta.Hidden)
			require.GreaterOrEqual(t, len(meta.Command), 3, "the command that trained it")
			assert.Contains(t, []string{"yutenv.az.train", "yutenv.az.fit"}, meta.Command[2], "the command that trained it: python -m yutenv.az.train or .fit")

			// ShippedFile hands out a copy of the checked bytes: changing it changes nothing shipped.
			b, err = ShippedFile(d.name)
			require.NoError(t, err)
			assert.Equal(t, embedded, b)
			b[0] ^= 1
			again, err := ShippedFile(d.name)
			require.NoError(t, err)
			assert.Equal(t, embedded, again)
			assert.NotEqual(t, b, again)
		})
	}
	t.Run("the folder holds the declared files", func(t *testing.T) {
		entries, err := os.ReadDir("shipped")
		require.NoError(t, err)
		for _, e := range entries {
			name, ext, _ := strings.Cut(e.Name(), ".")
			assert.True(t, declared[name], "shipped/%s is not declared in shippedTable", e.Name())
			assert.Contains(t, []string{"ynet", "json"}, ext, e.Name())
		}
	})
	assert.True(t, declared[Recommended], "the recommended network is shipped")
	assert.Equal(t, AZName, shippedTable[0].name, "az is declared first")
	assert.Equal(t, AZChecksum, shippedTable[0].sha256, "az is pinned")
	for _, ts := range testShipped {
		assert.False(t, declared[ts.name], "a test registration is not in the production table")
	}
}

func TestShippedLookups(t *testing.T) {
	names := ShippedNames()
	require.GreaterOrEqual(t, len(names), 3, "az and the test registrations")
	assert.Equal(t, AZName, names[0])
	names[0] = "changed" // a copy
	assert.Equal(t, AZName, ShippedNames()[0])
	az, err := AZ()
	require.NoError(t, err)
	same, err := ShippedNet(AZName)
	require.NoError(t, err)
	assert.Same(t, az, same, "read once")
	for _, name := range ShippedNames() {
		assert.True(t, agent.IsShipped(name), name)
		assert.Contains(t, agent.Names(), name)
	}
	t.Run("an unknown name", func(t *testing.T) {
		for _, f := range []func() error{
			func() error { _, err := ShippedNet("mystery"); return err },
			func() error { _, err := ShippedFile("mystery"); return err },
		} {
			err := f()
			require.ErrorIs(t, err, ErrNotShipped)
			assert.Contains(t, err.Error(), `"mystery"`)
			assert.Contains(t, err.Error(), "az, aztest, aztampered", "names the shipped ones")
		}
		_, err := NewShipped(must(agent.ParseSpec("random")), 1)
		assert.ErrorIs(t, err, agent.ErrSpec)
		assert.NoError(t, CheckSpecRules(must(agent.ParseSpec("random")), env.Standard()))
	})
	t.Run("a changed byte", func(t *testing.T) {
		_, err := ShippedNet("aztampered")
		require.ErrorIs(t, err, ErrChecksum)
		assert.ErrorIs(t, err, ErrNet)
		assert.Contains(t, err.Error(), "agent aztampered")
		_, err = ShippedFile("aztampered")
		assert.ErrorIs(t, err, ErrChecksum)
		_, err = agent.New("aztampered,sims=8", 1)
		assert.ErrorIs(t, err, ErrChecksum)
		assert.ErrorIs(t, err, agent.ErrSpec)
		assert.ErrorIs(t, CheckSpecRules(must(agent.ParseSpec("aztampered")), env.Standard()), ErrChecksum)
	})
}

func TestParseShippedRefusesTamperedCopies(t *testing.T) {
	az := azFile(t)
	flipped := append([]byte(nil), az...)
	flipped[len(flipped)/2] ^= 1
	tests := []struct {
		name string
		b    []byte
		sum  string
	}{
		{"a flipped byte", flipped, AZChecksum},
		{"truncated", az[:len(az)-1], AZChecksum},
		{"empty", nil, AZChecksum},
		{"another declared sum", az, hex.EncodeToString(make([]byte, 32))},
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

// TestAZPlaysEveryRuleSetItAccepts plays every shipped network (az and the
// test registration aztest, trained for other rules) alone and with a
// search, Gumbel and PUCT, through every variant: legal games to the end
// under the rules it accepts, and a clear refusal under every other rule
// set, at the first decision and through CheckSpecRules.
func TestAZPlaysEveryRuleSetItAccepts(t *testing.T) {
	for _, name := range playable() {
		t.Run(name, func(t *testing.T) {
			s, err := ShippedNet(name)
			require.NoError(t, err)
			accepted := 0
			for _, v := range env.Variants() {
				t.Run(v.Name, func(t *testing.T) {
					for _, spec := range []string{name, name + ",sims=8", name + ",sims=8,workers=2,gumbel=0"} {
						a, err := agent.New(spec, 7)
						require.NoError(t, err)
						assert.Equal(t, spec, a.Name())
						seats := []agent.Agent{a}
						for len(seats) < v.Rules.Players {
							seats = append(seats, mustAgent(t, "random"))
						}
						res, err := agent.Game{Rules: v.Rules, Seed: 11, Start: env.AnySeat, Seats: seats}.Play()
						checked := CheckSpecRules(must(agent.ParseSpec(spec)), v.Rules)
						if v.Rules != s.Rules {
							if err == nil { // never asked to decide (every decision of its seat forced): ask it directly
								_, err = a.Act(firstDecision(t, v.Rules))
							}
							for _, e := range []error{err, checked} {
								require.Error(t, e, "%s refuses rules it was not trained for", spec)
								assert.ErrorIs(t, e, ErrRules)
								assert.ErrorIs(t, e, agent.ErrSpec)
								assert.Contains(t, e.Error(), "agent "+name+" plays only")
								assert.Contains(t, e.Error(), `trained for, "`+s.Rules.String()+`" (tier `+s.Net.Tier.String())
								assert.Contains(t, e.Error(), "observation layout")
								assert.Contains(t, e.Error(), v.Rules.String())
								assert.NotContains(t, e.Error(), "\n")
							}
							continue
						}
						require.NoError(t, err, "a legal game under %s", v.Name)
						assert.NoError(t, checked)
						assert.Positive(t, res.Decisions)
						if spec == name {
							accepted++
						}
					}
				})
			}
			assert.Positive(t, accepted, "%s plays the rules it was trained for", name)
		})
	}
	s, err := AZ()
	require.NoError(t, err)
	assert.NoError(t, s.CheckRules(env.Standard()), "az plays the standard rules")
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
					assert.Contains(t, e.Error(), fmt.Sprintf("agent net plays only the rules its network was trained for, %q (tier compact, observation layout %d), not %q", tc.recorded, obs.LayoutVersion, played.String()))
					assert.NotContains(t, e.Error(), "\n")
					assert.NotContains(t, e.Error(), path, "a server's client must not learn its paths")
				}
			}
		})
	}
}
