// Package duckdb benchmarks weir side by side with DuckDB on the same Parquet
// files and cross-checks their answers. It is a module of its own so that
// DuckDB (cgo, through github.com/duckdb/duckdb-go/v2) stays out of weir's
// build; run it from this directory:
//
//	go test -run CrossCheck -v                 # answers: weir vs DuckDB
//	go test -run OtherWriterSettings -v        # weir over DuckDB files with other codecs, row groups
//	go test -run DuckDBReadsWeirParquet -v     # DuckDB reads what weir writes
//	go test -run '^$' -bench TPCH -count 5     # timings, for benchstat
//	WEIR_CLUSTER=1 go test -run ClusterCLI -v  # weir tpch --jobmanager on two TaskManagers vs DuckDB
//
// WEIR_TPCH_DIR names the directory of the eight TPC-H tables (default: the
// shared SF 0.1 copy, ../../../shared/tpch/sf0.1). WEIR_TPCH_SF=1 instead
// generates SF 1 once with weir's dbgen, has DuckDB rewrite it with its
// default Parquet writer (as the shared files were written) and caches it in
// WEIR_TPCH_CACHE (default: the user's cache directory). WEIR_BENCH_THREADS
// sets both engines' threads (default 2); WEIR_SPILL_BUDGET the budget of the
// cross-check's spilling runs (default 1 MiB).
//
//	WEIR_TPCH_SF=1 go test -run '^$' -bench TPCH -benchtime 3x -count 3 > tpch2.txt
//	go run ./tpchtable "2 threads=tpch2.txt"  # the table of BENCHMARKS.md
package duckdb
