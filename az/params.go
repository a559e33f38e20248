package az

import (
	"fmt"
	"slices"

	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/vecenv/wire"
)

// paramKeys are the params of a run that are not Settings.
var paramKeys = [...]string{"rules", "tier", "gumbel", "seed", "out"}

// ParamKeys returns the keys of the server's selfplay_new params that
// SetParam reads: rules, tier, gumbel, seed, out and every Setting's
// (protocol.SelfplayNewParams declares them; a test holds the two equal).
func ParamKeys() []string {
	keys := slices.Clone(paramKeys[:])
	for _, s := range settings {
		keys = append(keys, s.Key)
	}
	return keys
}

// SetParam reads the value of selfplay_new's param key from r into c:
// rules (a str or map, as wire.Rules reads them), tier, gumbel, seed,
// out, or a Setting within its bounds. Rules the engine refuses are a
// wire.RulesError.
func (c *Config) SetParam(key string, r *msgp.Reader) (err error) {
	var s []byte
	switch key {
	case "rules":
		c.Rules, err = wire.Rules(r)
	case "tier":
		if s, err = r.Str(); err == nil {
			c.Tier, err = obs.ParseTier(string(s))
		}
	case "gumbel":
		c.Gumbel, err = r.Bool()
	case "seed":
		c.Seed, err = r.Uint64()
	case "out":
		s, err = r.Str()
		c.Out = string(s)
	default:
		st, ok := LookupSetting(key)
		if !ok {
			return fmt.Errorf("%w: no param %q", ErrConfig, msgp.Clip([]byte(key)))
		}
		var v float64
		if st.Int {
			var i int64
			i, err = r.IntIn(int64(st.Min), int64(st.Max))
			v = float64(i)
		} else if v, err = r.Float(); err == nil && !(v >= st.Min && v <= st.Max) {
			err = fmt.Errorf("%g is not a number in %g..%g", v, st.Min, st.Max)
		}
		if err == nil {
			st.Set(c, v)
		}
	}
	return err
}
