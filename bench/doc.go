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
//
// bench/nexmark.sh runs every query of `weir nexmark` over the in-process
// generator at parallelism 2 with a checkpoint every 10 s, and the
// one-goroutine hand loops of bench/nexmark (q0, q1, q2, q5, q7) over the
// same events, printing events per second and per CPU-second:
//
//	bench/nexmark.sh 20000000
package bench
