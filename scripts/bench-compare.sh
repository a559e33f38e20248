#!/usr/bin/env bash
# bench-compare.sh: interleaved before/after benchmarks of two revisions.
#
#   scripts/bench-compare.sh [options] OLD NEW        (or: make bench-compare OLD=main NEW=HEAD)
#
# OLD and NEW are git revisions (main, HEAD, a branch, a commit). Each is exported into a
# temporary directory (git archive: the committed tree, never your working tree) and built there
# once: a test binary per package and the yutenv CLI. Then every benchmark that
# docs/BENCHMARKS.md records runs alternately, package by package and round after round (old
# then new in odd rounds, new then old in even ones), so that a machine whose load drifts during
# the run weighs on both sides alike:
#   - `go test -bench . -benchmem` of each package (BENCH_PKGS),
#   - `yutenv bench --json` (random playouts, one core), as BenchmarkCLIPlayouts in games/s and
#     decisions/s.
# benchstat (golang.org/x/perf/cmd/benchstat, installed by `make tools` into bin/) summarises
# the samples, and every figure that got worse by more than THRESHOLD percent (a time, size or
# count that rose; a rate, unit ending in /s, that fell) is listed at the end: as FELL when
# benchstat finds the difference significant, as unclear when it does not. Exit status: 0 when
# none fell, 1 when one did, 2 on a usage or build error.
#
# Options (each also an environment variable):
#   -r ROUNDS     BENCH_ROUNDS    alternations old,new per package          (default 3)
#   -c COUNT      BENCH_COUNT     -count of each go test run                (default 2)
#   -t BENCHTIME  BENCH_TIME      -benchtime of each go test run            (default 500ms)
#   -p PKGS       BENCH_PKGS      packages, space-separated                 (default: all in BENCHMARKS.md)
#   -b REGEX      BENCH_RE        -bench regexp                             (default .)
#   -T DURATION   BENCH_CLI_TIME  yutenv bench --time; "0" skips the CLI     (default 2s)
#   -x PERCENT    THRESHOLD       what "fell" means                         (default 5)
#   -o DIR        BENCH_OUT       keep old.txt, new.txt and the tables here (default: a temp dir)
# The samples are noisy on a loaded machine: read benchstat's p-values, and rerun with more rounds
# before believing a flag.
set -euo pipefail

rounds=${BENCH_ROUNDS:-3}
count=${BENCH_COUNT:-2}
benchtime=${BENCH_TIME:-500ms}
pkgs=${BENCH_PKGS:-./env/ ./env/agent/ ./obs/ ./server/ ./vecenv/ ./render/ ./nnet/ ./az/}
bench_re=${BENCH_RE:-.}
cli_time=${BENCH_CLI_TIME:-2s}
threshold=${THRESHOLD:-5}
out=${BENCH_OUT:-}

usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "r:c:t:p:b:T:x:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	c) count=$OPTARG ;;
	t) benchtime=$OPTARG ;;
	p) pkgs=$OPTARG ;;
	b) bench_re=$OPTARG ;;
	T) cli_time=$OPTARG ;;
	x) threshold=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage

repo=$(git rev-parse --show-toplevel)
benchstat=${BENCHSTAT:-$repo/bin/benchstat}
if [ ! -x "$benchstat" ]; then
	echo "bench-compare: $benchstat not found: run 'make tools' first" >&2
	exit 2
fi
old_rev=$(git -C "$repo" rev-parse --verify "$1^{commit}") || { echo "bench-compare: unknown revision $1" >&2; exit 2; }
new_rev=$(git -C "$repo" rev-parse --verify "$2^{commit}") || { echo "bench-compare: unknown revision $2" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out=$work/out
mkdir -p "$out"
: >"$out/old.txt"
: >"$out/new.txt"

# build SIDE REV: export REV and build its test binaries and CLI into $work/SIDE.
build() {
	local side=$1 rev=$2 dir=$work/$1
	mkdir -p "$dir/src" "$dir/bin"
	git -C "$repo" archive "$rev" | tar -x -C "$dir/src"
	echo "bench-compare: building $side ($rev)" >&2
	(cd "$dir/src" && go build -o "$dir/bin/yutenv" ./cmd/yutenv)
	local p name
	for p in $pkgs; do
		name=$(echo "$p" | tr -c 'a-zA-Z0-9\n' '_')
		if [ ! -d "$dir/src/$p" ]; then
			echo "bench-compare: $side has no package $p: skipped on that side" >&2
			continue
		fi
		(cd "$dir/src" && go test -c -o "$dir/bin/$name.test" "$p")
	done
}
build old "$old_rev"
build new "$new_rev"

# run SIDE: one round of SIDE's benchmarks of package $p, appended to $out/SIDE.txt.
run_pkg() {
	local side=$1 p=$2 name
	name=$(echo "$p" | tr -c 'a-zA-Z0-9\n' '_')
	[ -x "$work/$side/bin/$name.test" ] || return 0
	(cd "$work/$side/src/$p" && "$work/$side/bin/$name.test" -test.run '^$' -test.bench "$bench_re" \
		-test.benchmem -test.count "$count" -test.benchtime "$benchtime") >>"$out/$side.txt"
}

# run_cli SIDE: one `yutenv bench` of SIDE, as benchmark lines.
run_cli() {
	local side=$1 j
	j=$("$work/$side/bin/yutenv" bench --time "$cli_time" --json)
	python3 -c '
import json, sys
j = json.loads(sys.argv[1])
print("pkg: yutenv-cli")
print("BenchmarkCLIPlayouts %d %.1f games/s %.1f decisions/s" % (j["games"], j["games_per_sec"], j["decisions_per_sec"]))
' "$j" >>"$out/$side.txt"
}

# Odd rounds run old first, even rounds new first (old, new, new, old, ...), so that neither side
# always runs just after the other has warmed or loaded the machine.
for ((r = 1; r <= rounds; r++)); do
	first=old second=new
	if ((r % 2 == 0)); then
		first=new second=old
	fi
	echo "bench-compare: round $r of $rounds ($first first)" >&2
	for p in $pkgs; do
		run_pkg $first "$p"
		run_pkg $second "$p"
	done
	if [ "$cli_time" != "0" ]; then
		run_cli $first
		run_cli $second
	fi
done

"$benchstat" old="$out/old.txt" new="$out/new.txt" | tee "$out/benchstat.txt"
"$benchstat" -format csv old="$out/old.txt" new="$out/new.txt" >"$out/benchstat.csv" 2>/dev/null

# Flag every figure that got worse by more than the threshold, from benchstat's centres.
python3 - "$out/benchstat.csv" "$threshold" <<'EOF'
import csv, sys

path, threshold = sys.argv[1], float(sys.argv[2])
unit, pkg, flagged, unclear = "", "", [], []
for row in csv.reader(open(path, newline="")):
    if not row or not row[0] and len(row) > 1 and row[1] == "old":
        continue
    if row[0].startswith("pkg:"):
        pkg = row[0][4:].strip()
        continue
    if row[0] == "" and len(row) > 1:
        unit = row[1]  # the header row names the unit
        continue
    if row[0] == "geomean" or len(row) < 6:
        continue
    try:
        old, new = float(row[1]), float(row[3])
    except ValueError:
        continue
    higher_is_better = unit.endswith("/s")
    if old == new:
        continue
    if old == 0:
        change = float("inf")
    else:
        change = (new - old) / old * 100
    worse = -change if higher_is_better else change
    if worse > threshold:
        p = row[6] if len(row) > 6 else ""
        line = f"  {pkg} {row[0]}: {unit} {old:.4g} -> {new:.4g} ({change:+.1f}%, {p})"
        # benchstat writes "~" where the samples do not show a difference (p >= 0.05).
        (unclear if row[5].strip() == "~" else flagged).append(line)
print()
if unclear:
    print(f"bench-compare: {len(unclear)} figure(s) moved the wrong way by more than {threshold:g}% but not significantly (rerun with more rounds):")
    print("\n".join(unclear))
if flagged:
    print(f"bench-compare: {len(flagged)} figure(s) FELL by more than {threshold:g}%:")
    print("\n".join(flagged))
    sys.exit(1)
print(f"bench-compare: no figure fell significantly by more than {threshold:g}%")
EOF
