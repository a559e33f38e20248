package obs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTier(t *testing.T) {
	tests := []struct {
		in      string
		want    Tier
		wantErr bool
	}{
		{"compact", Compact, false},
		{"tactical", Tactical, false},
		{"planes", Planes, false},
		{" Planes\n", Planes, false},
		{"TACTICAL", Tactical, false},
		{"", 0, true},
		{"plane", 0, true},
		{"1", 0, true},
		{"compact,planes", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTier(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrBadTier)
				assert.Contains(t, err.Error(), "compact, tactical, planes")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTierNames(t *testing.T) {
	require.Len(t, Tiers(), numTiers)
	for i, tier := range Tiers() {
		t.Run(tier.String(), func(t *testing.T) {
			assert.Equal(t, Tier(i), tier)
			assert.True(t, tier.Valid())
			back, err := ParseTier(tier.String())
			require.NoError(t, err)
			assert.Equal(t, tier, back)
			txt, err := tier.MarshalText()
			require.NoError(t, err)
			var u Tier
			require.NoError(t, u.UnmarshalText(txt))
			assert.Equal(t, tier, u)
		})
	}
	bad := Tier(7)
	assert.False(t, bad.Valid())
	assert.Equal(t, "Tier(7)", bad.String())
	_, err := bad.MarshalText()
	assert.ErrorIs(t, err, ErrBadTier)
	var u Tier = Planes
	assert.ErrorIs(t, u.UnmarshalText([]byte("cnn")), ErrBadTier)
	assert.Equal(t, Planes, u, "a failed UnmarshalText leaves the tier unchanged")
}

func FuzzParseTier(f *testing.F) {
	for _, s := range []string{"compact", "tactical", "planes", " PLANES ", "", "\x00", "compactt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tier, err := ParseTier(s)
		if err != nil {
			if !assert.ErrorIs(t, err, ErrBadTier) {
				return
			}
			return
		}
		assert.True(t, tier.Valid())
		again, err := ParseTier(tier.String())
		assert.NoError(t, err)
		assert.Equal(t, tier, again)
	})
}
