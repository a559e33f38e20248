package agent

import (
	"strconv"
	"strings"
)

// String writes the spec in its canonical form: the name, ":N" for agents
// with a search, then the options that differ from their defaults in a
// fixed order (rollout, prior, c, time, workers, temp, gumbel, m, fast,
// full_prob). A PATH is quoted when it needs it (QuotePath), so that
// ParseSpec(sp.String()) gives sp back.
func (sp Spec) String() string {
	info, ok := kinds[sp.Name]
	if !ok {
		return sp.Name
	}
	var b strings.Builder
	b.WriteString(sp.Name)
	def, _ := DefaultSpec(sp.Name)
	switch {
	case sp.Name == "optimal":
		return sp.Name + ":" + QuotePath(sp.Path)
	case sp.Name == "net" || info.shipped:
		if sp.Name == "net" {
			b.WriteString(":" + QuotePath(sp.Path))
		}
		if sp.N != 0 {
			b.WriteString(",sims=" + strconv.Itoa(sp.N))
		}
	case info.defaultN == 0:
		return sp.Name
	default:
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(sp.N))
	}
	if sp.Rollout != def.Rollout {
		b.WriteString(",rollout=" + sp.Rollout.String())
	}
	if contains(info.keys, "prior") && sp.Prior != def.Prior {
		b.WriteString(",prior=" + sp.Prior.String())
	}
	if contains(info.keys, "c") && sp.C != def.C {
		b.WriteString(",c=" + strconv.FormatFloat(sp.C, 'g', -1, 64))
	}
	if sp.Time != def.Time {
		b.WriteString(",time=" + sp.Time.String())
	}
	if sp.Workers != def.Workers {
		b.WriteString(",workers=" + strconv.Itoa(sp.Workers))
	}
	if contains(info.keys, "temp") && sp.Temp != def.Temp {
		b.WriteString(",temp=" + strconv.FormatFloat(sp.Temp, 'g', -1, 64))
	}
	switch {
	case sp.Gumbel && !info.gumbel:
		b.WriteString(",gumbel=1")
	case !sp.Gumbel && info.gumbel && sp.N >= 1:
		b.WriteString(",gumbel=0")
	}
	if sp.Gumbel && sp.M != DefaultGumbelM {
		b.WriteString(",m=" + strconv.Itoa(sp.M))
	}
	if sp.Fast > 0 {
		b.WriteString(",fast=" + strconv.Itoa(sp.Fast))
		if sp.FullProb != DefaultFullProb {
			b.WriteString(",full_prob=" + strconv.FormatFloat(sp.FullProb, 'g', -1, 64))
		}
	}
	return b.String()
}
