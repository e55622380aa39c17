package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch"
)

var tables = []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"}

// spillBudget is the memory budget of the cross-check's spilling runs:
// WEIR_SPILL_BUDGET bytes, by default 1 MiB (at SF 1, 32 MiB spills too and
// takes minutes, not hours).
func spillBudget(tb testing.TB) int64 {
	if s := os.Getenv("WEIR_SPILL_BUDGET"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			tb.Fatalf("WEIR_SPILL_BUDGET=%q: want a positive number of bytes", s)
		}
		return n
	}
	return 1 << 20
}

func threads() int {
	if n, err := strconv.Atoi(os.Getenv("WEIR_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 2
}

// openDuckDB returns a DuckDB with one view per table over dir's Parquet files.
func openDuckDB(tb testing.TB, dir string, threads int) *sql.DB {
	db := newDuckDB(tb, threads)
	for _, t := range tables {
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s')", t, filepath.Join(dir, t+".parquet"))
		if _, err := db.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
	return db
}

// newDuckDB returns an in-memory DuckDB running queries on threads threads.
func newDuckDB(tb testing.TB, threads int) *sql.DB {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: SET applies to every query
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(fmt.Sprintf("SET threads = %d", threads)); err != nil {
		tb.Fatal(err)
	}
	return db
}

func querySQL(tb testing.TB, n int) string {
	b, err := os.ReadFile(fmt.Sprintf("../../testdata/tpch/queries/q%02d.sql", n))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// duckRows runs q and returns its rows as text, NULL as "".
func duckRows(tb testing.TB, db *sql.DB, q string) [][]string {
	out, err := queryRows(db, q)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// queryRows runs q on db and returns its rows as text.
func queryRows(db *sql.DB, q string) ([][]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		rec := make([]string, len(cols))
		for i, v := range vals {
			if v != nil {
				rec[i] = fmt.Sprint(v)
			}
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

func runWeir(tb testing.TB, dir string, n, parallelism int, memory int64) tpch.Result {
	env := dataset.New(dataset.Options{Parallelism: parallelism, Memory: memory, TmpDir: tb.TempDir()})
	res, err := tpch.Run(context.Background(), env, dir, n)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// sameField compares two printed values: numbers with a tolerance (absolute
// 0.01 or relative 1e-6), dates by their first ten characters (DuckDB's driver
// prints a DATE as a time), anything else exactly.
func sameField(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 == nil && err2 == nil {
		return math.Abs(x-y) <= 0.01 || math.Abs(x-y) <= 1e-6*math.Abs(y)
	}
	if len(a) >= 10 && len(b) >= 10 && strings.HasPrefix(b, a[:10]) && len(a) == 10 {
		return true
	}
	return false
}

func compareRows(t *testing.T, weir, duck [][]string) {
	t.Helper()
	if len(weir) != len(duck) {
		t.Fatalf("weir has %d rows, DuckDB %d", len(weir), len(duck))
	}
	for i := range duck {
		if len(weir[i]) != len(duck[i]) {
			t.Fatalf("row %d: weir has %d fields, DuckDB %d", i+1, len(weir[i]), len(duck[i]))
		}
		for j := range duck[i] {
			if !sameField(weir[i][j], duck[i][j]) {
				t.Fatalf("row %d field %d: weir %q, DuckDB %q\nweir:   %v\nDuckDB: %v", i+1, j+1, weir[i][j], duck[i][j], weir[i], duck[i])
			}
		}
	}
}

// TestCrossCheck runs every query weir implements in both engines over the
// same files and compares the answers.
func TestCrossCheck(t *testing.T) {
	dir := dataDir(t)
	db := openDuckDB(t, dir, threads())
	for _, n := range tpch.Numbers() {
		t.Run(fmt.Sprintf("q%02d", n), func(t *testing.T) {
			want := duckRows(t, db, querySQL(t, n))
			for _, p := range []int{1, 2} {
				compareRows(t, runWeir(t, dir, n, p, 0).Rows, want)
			}
			compareRows(t, runWeir(t, dir, n, 2, spillBudget(t)).Rows, want) // a budget that forces spilling
		})
	}
}

// TestOtherWriterSettings has DuckDB rewrite the tables with other codecs and
// row-group sizes, then checks weir's answers over them against DuckDB's.
func TestOtherWriterSettings(t *testing.T) {
	src := dataDir(t)
	db := openDuckDB(t, src, threads())
	for _, variant := range []struct{ name, opts string }{
		{"zstd-rg10k", "COMPRESSION zstd, ROW_GROUP_SIZE 10000"},
		{"gzip", "COMPRESSION gzip"},
		{"uncompressed-v2", "COMPRESSION uncompressed, PARQUET_VERSION v2"},
	} {
		t.Run(variant.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, tb := range tables {
				q := fmt.Sprintf("COPY (SELECT * FROM %s) TO '%s' (FORMAT parquet, %s)", tb, filepath.Join(dir, tb+".parquet"), variant.opts)
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			other := openDuckDB(t, dir, threads())
			for _, n := range tpch.Numbers() {
				want := duckRows(t, other, querySQL(t, n))
				compareRows(t, runWeir(t, dir, n, 2, 0).Rows, want)
			}
		})
	}
}

// BenchmarkTPCH times each query in weir and in DuckDB on the same files with
// the same number of threads; the names read well in benchstat.
func BenchmarkTPCH(b *testing.B) {
	dir := dataDir(b)
	p := threads()
	db := openDuckDB(b, dir, p)
	for _, n := range tpch.Numbers() {
		q := querySQL(b, n)
		b.Run(fmt.Sprintf("q%02d/engine=weir", n), func(b *testing.B) {
			// weir gets as many cores as DuckDB gets threads: its garbage
			// collector and pipelined tasks run on them too
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(p))
			for b.Loop() {
				runWeir(b, dir, n, p, 0)
			}
		})
		b.Run(fmt.Sprintf("q%02d/engine=duckdb", n), func(b *testing.B) {
			for b.Loop() {
				duckRows(b, db, q)
			}
		})
	}
}
