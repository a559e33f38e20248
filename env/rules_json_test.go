package env

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRulesJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Rules
		wantErr bool
	}{
		{"empty object is standard", `{}`, Standard(), false},
		{"missing fields keep standard values", `{"players":3,"end":"rank"}`, Rules{Players: 3, Pieces: 4, FlatProb: 0.6, BackDo: true, End: EndRank}, false},
		{"misspelt field is refused", `{"playres":3}`, Rules{}, true},
		{"unknown enum value is refused", `{"finish":"somewhere"}`, Rules{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Rules
			err := json.Unmarshal([]byte(tc.in), &r)
			if tc.wantErr {
				assert.ErrorIs(t, err, ErrInvalidRules)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, r)
		})
	}
}

func TestIsLegalAllocatesNothing(t *testing.T) {
	s, err := New(Standard(), 3, 0)
	require.NoError(t, err)
	RandomPlayout(&s, rand.New(rand.NewPCG(1, 1)), 10)
	s.Advance()
	require.Equal(t, PhaseMove, s.Phase())
	allocs := testing.AllocsPerRun(100, func() {
		for a := 0; a < NumActions; a++ {
			_ = s.IsLegal(Action(a))
		}
	})
	assert.Zero(t, allocs)
}
