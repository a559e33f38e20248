package obs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yutenv/yutenv/env"
)

func TestSpaceLayout(t *testing.T) {
	wantSize := map[Tier]int{Compact: 213, Tactical: 2042, Planes: 598}
	for _, tier := range Tiers() {
		t.Run(tier.String(), func(t *testing.T) {
			sp, err := SpaceOf(tier)
			require.NoError(t, err)
			assert.Equal(t, tier.String(), sp.Tier)
			assert.Equal(t, "float32", sp.Dtype)
			assert.Equal(t, wantSize[tier], sp.Size)
			off := 0
			seen := map[string]bool{}
			for _, p := range sp.Parts {
				assert.False(t, seen[p.Name], "part %s twice", p.Name)
				seen[p.Name] = true
				assert.Equal(t, off, p.Offset, "part %s does not follow the previous one", p.Name)
				require.Len(t, p.Axes, len(p.Shape), p.Name)
				require.Len(t, p.Labels, len(p.Shape), p.Name)
				assert.Equal(t, p.Labels[0], p.Names, p.Name)
				for ax, n := range p.Shape {
					assert.Len(t, p.Labels[ax], n, "%s axis %s", p.Name, p.Axes[ax])
				}
				assert.LessOrEqual(t, p.Low, p.High)
				assert.GreaterOrEqual(t, p.Low, sp.Low)
				assert.LessOrEqual(t, p.High, sp.High)
				assert.NotEmpty(t, p.Doc)
				off += p.Len()
			}
			assert.Equal(t, sp.Size, off, "parts must cover the vector")
			// Every element has a distinct label.
			labels := map[string]int{}
			for i := 0; i < sp.Size; i++ {
				l := sp.Label(i)
				require.NotEmpty(t, l)
				if j, dup := labels[l]; dup {
					t.Fatalf("elements %d and %d are both %q", j, i, l)
				}
				labels[l] = i
			}
			assert.Empty(t, sp.Label(-1))
			assert.Empty(t, sp.Label(sp.Size))
		})
	}
}

func TestSpaceLabels(t *testing.T) {
	tests := []struct {
		tier  Tier
		index int
		want  string
	}{
		{Compact, 0, "board[self,1@OUTER]"},
		{Compact, 19, "board[self,HOME@OUTER]"},
		{Compact, 20, "board[self,5@C1]"},
		{Compact, 43 + 39, "board[opp1,22@CENTRE/C1]"},
		{Compact, offHand + 1, "hand[opp1]"},
		{Compact, offSeats + 3, "seats[opp1,place]"},
		{Compact, offPool + 2, "pool[gae]"},
		{Compact, offPhase + 1, "phase[move]"},
		{Compact, offRules + 2, "rules[flat_prob]"},
		{Compact, offMissed + 1, "missed[opp1]"},
		{Compact, offToMove + 3, "to_move[opp3]"},
		{Tactical, offThreat, "threat[HOME]"},
		{Tactical, offActions + 67*numActionFeatures + featCaptures, "actions[gae@7,captures]"},
		{Tactical, sizeTactical - 1, "actions[mo@enter,exposure]"},
		{Planes, chThreat*env.NumStations + 22, "planes[threat,22]"},
		{Planes, offGlobals + gPool + 5, "globals[pool/mo]"},
		{Planes, offGlobals + gMissed + 2, "globals[missed/opp2]"},
		{Planes, offGlobals + gToMove, "globals[to_move/self]"},
		{Planes, offGlobals + gEnter + 5, "globals[enter/mo]"},
		{Planes, sizePlanes - 1, "globals[to_move/opp3]"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, spaces[tc.tier].Label(tc.index))
		})
	}
}

func TestSpaceIsACopy(t *testing.T) {
	e, err := NewEncoder(env.Standard(), Planes)
	require.NoError(t, err)
	sp := e.Space()
	sp.Parts[0].Names[0] = "changed"
	sp.Parts[0].Shape[0] = 1
	sp.Parts[0].Labels[1][0] = "changed"
	again := e.Space()
	assert.Equal(t, "height/self", again.Parts[0].Names[0])
	assert.Equal(t, "HOME", again.Parts[0].Labels[1][0])
	assert.Equal(t, numChannel, again.Parts[0].Shape[0])
}

func TestSpaceOf(t *testing.T) {
	_, err := SpaceOf(Tier(3))
	assert.ErrorIs(t, err, ErrBadTier)
	sp, err := SpaceOf(Tactical)
	require.NoError(t, err)
	p, ok := sp.Part("actions")
	require.True(t, ok)
	assert.Equal(t, []int{env.NumActions, numActionFeatures}, p.Shape)
	assert.Equal(t, actionFeatureNames, p.Labels[1])
	_, ok = sp.Part("nope")
	assert.False(t, ok)
}

// The space is what the server puts in its handshake: it must survive JSON.
func TestSpaceJSON(t *testing.T) {
	sp, err := SpaceOf(Planes)
	require.NoError(t, err)
	b, err := json.Marshal(sp)
	require.NoError(t, err)
	var back Space
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, sp, back)
	assert.Contains(t, string(b), `"channel","station"`)
}

func TestLayoutTables(t *testing.T) {
	assert.Equal(t, 20, maxSteps, "station 1 on OUTER is 20 steps from finishing")
	assert.Len(t, channelNames, numChannel)
	assert.Len(t, globalNames, numGlobal)
	assert.Len(t, actionFeatureNames, numActionFeatures)
	assert.Len(t, rulesNames, numRules)
	// Every (station, route) a stack can stand on has a cell; C2 and
	// CENTRE/C2 share theirs, and nothing else does.
	owners := map[int8][]string{}
	for r := env.Route(0); r < env.NumRoutes; r++ {
		for s := env.Station(0); s < env.NumStations; s++ {
			on := env.OnRoute(s, r)
			if r == env.RouteOuter && s == env.Home {
				on = true // HOME at the end of OUTER
			}
			if !on {
				assert.Equal(t, int8(-1), cellOf[r][s], "%v@%v", s, r)
				continue
			}
			c := cellOf[r][s]
			require.GreaterOrEqual(t, c, int8(0), "%v@%v", s, r)
			owners[c] = append(owners[c], r.String())
		}
	}
	assert.Len(t, owners, numCells)
	for c, rs := range owners {
		if len(rs) > 1 {
			assert.Equal(t, []string{"C2", "CENTRE/C2"}, rs, "cell %s", cellNames[c])
		}
	}
}
