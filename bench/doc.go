// Package bench holds end-to-end benchmarks of weir's jobs against the tools they
// replace. It has no code of its own: run
//
//	WEIR_BENCH_SORT_BYTES=2000000000 go test -run '^$' -bench WeirSortVsGNU -benchtime 1x ./bench/
//
// The input is generated once per size (random 100-byte printable lines, seed 1,
// cli.WriteRandomLines) and cached under $TMPDIR/weir-bench.
//
// bench/windowstats.sh compares `weir run window-stats` with the one-goroutine
// hand loop of bench/windowstats (a command: `windowstats gen` writes the
// input, `windowstats hand` runs the loop), as built binaries under
// /usr/bin/time -v, alternated:
//
//	bench/windowstats.sh 5000000 5 256MiB
package bench
