#!/usr/bin/env bash
# chaos.sh: kill a checkpointing weir stream job with SIGKILL at random
# moments, restart it with the same command each time, let the last run
# finish, and compare its committed output with an uninterrupted run's.
#
#   scripts/chaos.sh [-k KILLS] [-j window-stats|streaming-wordcount] [-n EVENTS]
#                    [-r RATE] [-i INTERVAL] [-b heap|disk] [-I] [-u] [-p PARALLELISM]
#
# -I takes incremental checkpoints (with -b disk), -u unaligned ones.
#
# Prints the number of records lost and duplicated; exits 1 if either is
# not 0. Needs go (to build cmd/weir), awk, sort and diff.
set -euo pipefail

kills=20 job=window-stats events=10000 rate=1000 interval=200ms backend=heap parallelism=2 extra=()
while getopts k:j:n:r:i:b:p:Iuh opt; do
	case $opt in
	k) kills=$OPTARG ;;
	j) job=$OPTARG ;;
	n) events=$OPTARG ;;
	r) rate=$OPTARG ;;
	i) interval=$OPTARG ;;
	b) backend=$OPTARG ;;
	I) extra+=(--incremental-checkpoints) ;;
	u) extra+=(--unaligned-checkpoints) ;;
	p) parallelism=$OPTARG ;;
	*) sed -n '2,14p' "$0"; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building weir into $work"
(cd "$root" && go build -o "$work/weir" ./cmd/weir)

case $job in
window-stats)
	awk -v n="$events" 'BEGIN { srand(1); print "user,ts,amount"
		for (i = 0; i < n; i++) printf "u%d,%d,%d\n", int(rand() * 7), 1000000 + i * 10, int(rand() * 1000) }' >"$work/events.csv"
	args=(run window-stats --input "$work/events.csv" --key user --time ts --value amount --window tumbling:1s)
	;;
streaming-wordcount)
	mkdir "$work/text"
	for f in 0 1; do
		awk -v n="$((events / 2))" -v s="$f" 'BEGIN { srand(s + 1)
			for (i = 0; i < n; i++) { l = ""; for (w = 0; w < 5; w++) l = l (w ? " " : "") "w" int(rand() * 60); print l } }' >"$work/text/part$f.txt"
	done
	args=(run streaming-wordcount --input "$work/text")
	;;
*)
	echo "chaos.sh: -j must be window-stats or streaming-wordcount" >&2
	exit 2
	;;
esac
args+=(--parallelism "$parallelism")

echo "uninterrupted run"
"$work/weir" "${args[@]}" --output "$work/oracle" >/dev/null

run=("$work/weir" "${args[@]}" --output "$work/out" --checkpoint-dir "$work/chk"
	--checkpoint-interval "$interval" --state-backend "$backend" --rate "$rate" ${extra[@]+"${extra[@]}"})
killed=0
while ((killed < kills)); do
	"${run[@]}" >/dev/null 2>"$work/stderr" &
	pid=$!
	sleep "0.$((200 + RANDOM % 500))"
	if ! kill -0 "$pid" 2>/dev/null; then
		if wait "$pid"; then
			echo "the job finished after $killed kills: give it more input (-n) or a lower rate (-r)"
			break
		fi
		echo "the job failed:" >&2
		cat "$work/stderr" >&2
		exit 1
	fi
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	killed=$((killed + 1))
	echo "kill $killed"
done
echo "last run, to the end"
"${run[@]}" >/dev/null

committed() { find "$1" -maxdepth 1 -type f ! -name '.*' -exec cat {} + | sort; }
committed "$work/oracle" >"$work/want"
committed "$work/out" >"$work/got"
lost=$(diff "$work/want" "$work/got" | grep -c '^<' || true)
dup=$(diff "$work/want" "$work/got" | grep -c '^>' || true)
echo "$job, $killed kills, checkpoints every $interval, $backend backend ${extra[*]-}: $(wc -l <"$work/want") records, $lost lost, $dup duplicated"
[[ $lost == 0 && $dup == 0 ]]
