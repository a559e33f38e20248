package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/env/agent"
)

// Every subcommand that takes --rules lists every rule option of env.Options
// (its aliases and values) in its --help.
func TestRulesHelpListsEveryOption(t *testing.T) {
	for _, cmd := range []string{"play", "eval", "selfplay", "bench", "analyse"} {
		t.Run(cmd, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, 0, run([]string{cmd, "--help"}, &out, &errb))
			help := errb.String() + out.String()
			for _, o := range env.Options() {
				assert.Contains(t, help, "  "+o.Key, o.Key)
				for _, a := range o.Aliases {
					assert.Contains(t, help, a, o.Key)
				}
			}
			assert.Contains(t, help, "pass, stop, exact, wrap")
		})
	}
}

// Every subcommand with a flag that takes agent specs prints the spec
// grammar of env/agent's tables in its --help; the others do not.
func TestSpecHelpInEveryCommandThatTakesSpecs(t *testing.T) {
	for _, tt := range []struct {
		cmd   string
		specs bool
	}{
		{"eval", true}, {"ladder", true}, {"play", true}, {"selfplay", true}, {"analyse", true},
		{"bench", false}, {"serve", false},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, 0, run([]string{tt.cmd, "--help"}, &out, &errb))
			help := errb.String() + out.String()
			if tt.specs {
				assert.Contains(t, help, agent.SpecHelp())
			} else {
				assert.NotContains(t, help, "Agent specs (SPEC)")
			}
		})
	}
}
