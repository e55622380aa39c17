#!/bin/sh
# bench/windowstats.sh compares `weir run window-stats` with the one-goroutine
# hand loop of bench/windowstats over the same generated CSV, as a user runs
# them: built binaries under /usr/bin/time -v, alternated round by round. It
# prints per run the wall time, the events per second over that wall time
# (process start included), the peak RSS and the user CPU, then checks that
# both wrote the same firings.
#
#	bench/windowstats.sh [EVENTS [ROUNDS [MEMORY]]]
#
# EVENTS defaults to 5000000 (1,000 keys, tumbling 10 s windows, times out of
# order by up to 500 ms and a watermark bound of 1 s), ROUNDS to 5, MEMORY
# (weir's --memory) to 256MiB. The input is generated once per size under
# $WEIR_BENCH_DIR (default $TMPDIR/weir-bench); HAND=--dense runs the hand
# loop's array variant. Run it from the repository's root.
set -eu

events=${1:-5000000}
rounds=${2:-5}
memory=${3:-256MiB}
dir=${WEIR_BENCH_DIR:-${TMPDIR:-/tmp}/weir-bench}
hand=${HAND:-}
mkdir -p "$dir"

go build -o "$dir/weir" ./cmd/weir
go build -o "$dir/windowstats" ./bench/windowstats
in="$dir/events-$events.csv"
[ -f "$in" ] || "$dir/windowstats" gen --events "$events" --keys 1000 --out "$in"

# measure NAME CMD... runs CMD under /usr/bin/time -v and prints NAME, the
# wall seconds, events per second, peak RSS in MiB and user CPU seconds.
measure() {
	name=$1
	shift
	/usr/bin/time -v "$@" >/dev/null 2>"$dir/time.txt" || {
		cat "$dir/time.txt" >&2
		exit 1
	}
	awk -v name="$name" -v events="$events" '
		/Elapsed \(wall clock\)/ { n = split($NF, p, ":"); wall = 0; for (i = 1; i <= n; i++) wall = wall * 60 + p[i] }
		/Maximum resident set size/ { rss = $NF / 1024 }
		/User time/ { user = $NF }
		END { printf "%-5s %7.2f s %12.0f events/s %7.1f MiB %6.2f s user\n", name, wall, events / wall, rss, user }
	' "$dir/time.txt"
}

echo "commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), $events events, --memory $memory, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	rm -rf "$dir/weir-out"
	measure weir "$dir/weir" run window-stats --input "$in" --key user --time ts --value amount \
		--window tumbling:10s --out-of-orderness 1s --memory "$memory" --output "$dir/weir-out" --progress=false
	# shellcheck disable=SC2086 # $hand is one optional flag
	measure hand "$dir/windowstats" hand --input "$in" --window 10s --out-of-orderness 1s --output "$dir/hand-out.txt" $hand
done
cat "$dir"/weir-out/part-* | LC_ALL=C sort >"$dir/weir-sorted.txt"
LC_ALL=C sort "$dir/hand-out.txt" >"$dir/hand-sorted.txt"
if cmp -s "$dir/weir-sorted.txt" "$dir/hand-sorted.txt"; then
	echo "same firings: $(wc -l <"$dir/hand-sorted.txt") lines"
else
	echo "the firings differ: $dir/weir-sorted.txt $dir/hand-sorted.txt" >&2
	exit 1
fi
