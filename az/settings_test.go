package az

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettingsDeclareValidDefaults checks that every declared setting sets
// its field, that its default lies in its range (max_batch's 0: "as
// games_in_flight") and that DefaultConfig is a valid run.
func TestSettingsDeclareValidDefaults(t *testing.T) {
	for _, st := range Settings() {
		t.Run(st.Key, func(t *testing.T) {
			if st.Key != "max_batch" {
				assert.GreaterOrEqual(t, st.Default, st.Min)
			}
			assert.LessOrEqual(t, st.Default, st.Max)
			assert.NotEmpty(t, st.Doc)
			c, d := DefaultConfig(), DefaultConfig()
			st.Set(&c, st.Max)
			assert.NotEqual(t, d, c, "Set changes the Config")
			got, ok := LookupSetting(st.Key)
			require.True(t, ok)
			assert.Equal(t, st.Key, got.Key)
		})
	}
	c := DefaultConfig()
	c.Out = t.TempDir()
	require.NoError(t, c.check())
	assert.Equal(t, c.InFlight, c.MaxBatch)
	_, ok := LookupSetting("nope")
	assert.False(t, ok)
}

// TestMemoryBytes: a run's estimate grows with the games in flight, their
// searches (the fast search's tree too) and the observation size.
func TestMemoryBytes(t *testing.T) {
	base := Config{Sims: 64, InFlight: 16, MaxBatch: 16}
	cases := []struct {
		name string
		more Config
	}{
		{"more games in flight", Config{Sims: 64, InFlight: 32, MaxBatch: 16}},
		{"more simulations", Config{Sims: 256, InFlight: 16, MaxBatch: 16}},
		{"a fast search too", Config{Sims: 64, FastSims: 8, InFlight: 16, MaxBatch: 16}},
		{"a larger batch", Config{Sims: 64, InFlight: 16, MaxBatch: 64}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Greater(t, tc.more.MemoryBytes(100), base.MemoryBytes(100))
		})
	}
	assert.Greater(t, base.MemoryBytes(400), base.MemoryBytes(100), "larger observations")
	assert.Positive(t, Config{Sims: 1, InFlight: 1}.MemoryBytes(1))
}
