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
