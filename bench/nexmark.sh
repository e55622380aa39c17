#!/bin/sh
# bench/nexmark.sh runs every Nexmark query of `weir nexmark` over the
# in-process generator at parallelism 2, with a checkpoint every 10 s and
# the rows dropped (--discard, as Flink's Nexmark runs sink into a
# blackhole), and the one-goroutine hand loops of bench/nexmark for q0, q1,
# q2, q5 and q7 over the same events, as built binaries. It prints each
# run's last line: events, wall and CPU seconds (getrusage), events per
# second and per CPU-second.
#
#	bench/nexmark.sh [EVENTS [QUERIES]]
#
# EVENTS defaults to 20000000 (33 minutes of event time at the suite's
# 10,000 events per second), QUERIES to every query. Run it from the
# repository's root; the binaries go to $WEIR_BENCH_DIR (default
# $TMPDIR/weir-bench).
set -eu

events=${1:-20000000}
queries=${2:-"q0 q1 q2 q3 q4 q5 q7 q8 q9 q11 q14"}
dir=${WEIR_BENCH_DIR:-${TMPDIR:-/tmp}/weir-bench}
mkdir -p "$dir"

go build -o "$dir/weir" ./cmd/weir
go build -o "$dir/nexmark-hand" ./bench/nexmark

echo "commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), $events events, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for q in $queries; do
	"$dir/weir" nexmark --query "$q" --events "$events" --parallelism 2 --discard \
		--checkpoint-interval 10s --memory 1GiB --progress=false 2>&1 >/dev/null | tail -1
	case $q in
	q0 | q1 | q2 | q5 | q7) "$dir/nexmark-hand" --query "$q" --events "$events" ;;
	esac
done
