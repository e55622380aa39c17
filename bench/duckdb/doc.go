// Package duckdb benchmarks weir side by side with DuckDB on the same Parquet
// files and cross-checks their answers. It is a module of its own so that
// DuckDB (cgo, through github.com/duckdb/duckdb-go/v2) stays out of weir's
// build; run it from this directory:
//
//	go test -run CrossCheck -v                 # answers: weir vs DuckDB
//	go test -run OtherWriterSettings -v        # weir over DuckDB files with other codecs, row groups
//	go test -run DuckDBReadsWeirParquet -v     # DuckDB reads what weir writes
//	go test -run '^$' -bench TPCH -count 5     # timings, for benchstat
//
// WEIR_TPCH_DIR names the directory of the eight TPC-H tables (default: the
// shared SF 0.1 copy, ../../../shared/tpch/sf0.1); WEIR_BENCH_THREADS sets
// both engines' threads (default 2).
package duckdb
