package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/israce"
)

// xarchNet is the network the cross-architecture test plays.
var xarchNet = filepath.Join("..", "..", "nnet", "testdata", "go-tiny.ynet")

// xarchAgents are the agents whose games and values must not depend on the
// machine: every float path of a decision (greedy scores, PUCT and UCB1,
// the greedy prior's softmax, visit temperature, the network's layers,
// softmax and tanh, Gumbel noise and completed Q).
func xarchAgents(net string) []string {
	return []string{
		"mc:12",
		"mc:12,rollout=greedy",
		"mcts:40",
		"mcts:40,prior=none",
		"mcts:40,temp=1",
		"net:" + net,
		"net:" + net + ",sims=16",
		"net:" + net + ",sims=16,temp=1",
		"net:" + net + ",sims=16,gumbel=1",
	}
}

// xarchTarget is one way of running a yutenv binary.
type xarchTarget struct {
	name string
	cmd  []string // the binary, after an emulator if any
	env  []string
}

// run runs the target's yutenv with args and returns its standard output.
func (x xarchTarget) run(t *testing.T, args ...string) []byte {
	t.Helper()
	argv := append(append([]string{}, x.cmd...), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), x.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "%s: yutenv %s: %s", x.name, strings.Join(args, " "), errb.String())
	return out.Bytes()
}

// outputs plays every agent of xarchAgents on target x and returns, by
// name, the sha256 of each output that must be the same on every machine:
// the shards and records of a selfplay dataset (observations, search
// policies, search values) and analyse's JSON (its values printed to full
// precision) at a decision of the record file rec.
func (x xarchTarget) outputs(t *testing.T, dir, rec string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for i, agent := range xarchAgents(xarchNet) {
		out := filepath.Join(dir, strings.ReplaceAll(x.name, " ", "_"), "ds", string(rune('a'+i)))
		x.run(t, "selfplay", "--games", "4", "--seed", "7", "--agents", agent, "--tier", "compact", "--out", out, "--quiet", "--workers", "1")
		files, err := filepath.Glob(filepath.Join(out, "shard-*"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			sums["selfplay "+agent+" "+filepath.Base(f)] = sha(b)
		}
		js := x.run(t, "analyse", "--record", rec, "--decision", "12", "--agent", agent, "--seed", "3", "--json")
		sums["analyse "+agent] = sha(js)
	}
	return sums
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// buildFor builds the yutenv binary into dir with extra environment
// (GOARCH, GOAMD64) and returns its path. It compiles as the wheels'
// build does (python/hatch_build.py: CGO off, -trimpath), so that the
// package build and the wheels' tests reuse these compiled packages from
// Go's cache rather than compile linux/amd64 and linux/arm64 again; it
// keeps the symbols (no -s -w) that fusedSites reads.
func buildFor(t *testing.T, dir, name string, env ...string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), append([]string{"CGO_ENABLED=0"}, env...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %v: %s", env, out)
	return bin
}

// cpuHasFMA reports whether this Linux machine's CPU runs GOAMD64=v3 code
// (AVX2 and FMA).
func cpuHasFMA() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			f := " " + line + " "
			return strings.Contains(f, " fma ") && strings.Contains(f, " avx2 ")
		}
	}
	return false
}

// TestSameGamesOnEveryArch: the same seed and agents give the same games,
// datasets and search values, byte for byte, on every architecture the
// wheels ship, whatever the CPU. It builds yutenv for amd64 (GOAMD64=v1,
// the reference), amd64 GOAMD64=v3 (where Go fuses x*y+z into one FMA
// instruction; run when the CPU has AVX2 and FMA) and linux/arm64 (where
// Go always fuses; run under qemu-aarch64-static, from
// scripts/install-test-tools.sh), and runs the v1 binary again with
// GODEBUG=cpu.fma=off (the standard library's math.Exp takes another path
// on a CPU without FMA). Before the fix, the network agents' search values
// differed under arm64 and v3, and math.Exp, Log, Pow and Tanh differed
// in the last bit between amd64 and arm64.
func TestSameGamesOnEveryArch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds yutenv three times and runs one under emulation")
	}
	if israce.Enabled {
		t.Skip("builds and runs yutenv without the race detector, arm64 under emulation: the run without -race does the same")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the reference is a linux/amd64 build; run this test on linux/amd64")
	}
	dir := t.TempDir()
	ref := xarchTarget{name: "amd64 v1", cmd: []string{buildFor(t, dir, "yutenv-v1", "GOARCH=amd64", "GOAMD64=v1")}}
	targets := []xarchTarget{{name: "amd64 v1 cpu.fma=off", cmd: ref.cmd, env: []string{"GODEBUG=cpu.fma=off"}}}
	if cpuHasFMA() {
		targets = append(targets, xarchTarget{name: "amd64 v3", cmd: []string{buildFor(t, dir, "yutenv-v3", "GOARCH=amd64", "GOAMD64=v3")}})
	} else {
		t.Log("this CPU has no AVX2/FMA: the GOAMD64=v3 build is not run")
	}
	arm := buildFor(t, dir, "yutenv-arm64", "GOARCH=arm64")
	t.Run("no FMA in arm64 decision code", func(t *testing.T) {
		assert.Empty(t, fusedSites(t, arm), "fused multiply-adds left in yutenv's arm64 code: round each product with float64(x*y) (docs/COMPATIBILITY.md)")
	})
	if qemu, err := exec.LookPath("qemu-aarch64-static"); err == nil {
		targets = append(targets, xarchTarget{name: "arm64 qemu", cmd: []string{qemu, arm}})
	} else {
		missingTool(t, "no qemu-aarch64-static on PATH: install it with scripts/install-test-tools.sh (Debian's qemu-user-static); the arm64 build is not run")
	}

	rec := filepath.Join(dir, "greedy.jsonl")
	ref.run(t, "selfplay", "--games", "1", "--seed", "5", "--agents", "greedy", "--out", rec, "--quiet")
	want := ref.outputs(t, dir, rec)
	for _, x := range targets {
		t.Run(x.name, func(t *testing.T) {
			got := x.outputs(t, dir, rec)
			for name, sum := range want {
				assert.Equal(t, sum, got[name], "%s: differs from %s", name, ref.name)
			}
		})
	}
}

// fusedSites returns the functions of yutenv's own packages (but the
// renderer, whose drawing is not a decision) in the arm64 binary bin that
// hold a fused multiply-add or -subtract instruction, with their count:
// the byte-for-byte games cannot reach every path (Dirichlet noise, other
// rules), this finds the sites they miss.
func fusedSites(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command("go", "tool", "objdump", "-s", `^github\.com/yutenv/yutenv/(analysis|az|dataset|env|internal|nnet|obs|positions|server|stats|vecenv)[./]`, bin).CombinedOutput()
	require.NoError(t, err, "go tool objdump: %s", out)
	count := map[string]int{}
	var fn string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			fn = strings.Fields(line)[1]
			continue
		}
		for _, op := range []string{"\tFMADD", "\tFMSUB", "\tFNMADD", "\tFNMSUB", "\tVFMLA", "\tVFMLS"} {
			if strings.Contains(line, op) {
				count[fn]++
			}
		}
	}
	var sites []string
	for fn, n := range count {
		sites = append(sites, fmt.Sprintf("%s (%d)", fn, n))
	}
	sort.Strings(sites)
	return sites
}

// missingTool fails the test when YUTENV_REQUIRE_TOOLS=1 (as in CI) and
// only logs msg otherwise: the test goes on without that tool's part.
func missingTool(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("YUTENV_REQUIRE_TOOLS") == "1" {
		t.Fatal(msg + "; YUTENV_REQUIRE_TOOLS=1 makes this a failure")
	}
	t.Log(msg + "; set YUTENV_REQUIRE_TOOLS=1 to fail instead")
}
