package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/weirdata/weir/tpch/dbgen"
)

// The data the benchmarks run on: WEIR_TPCH_DIR names a directory of the
// eight tables; else WEIR_TPCH_SF (a scale factor, e.g. 1) selects tables
// generated once by weir's dbgen and rewritten by DuckDB's Parquet writer
// with its defaults (Snappy, 122,880-row groups: what the DuckDB
// figures were measured on), cached in WEIR_TPCH_CACHE (default the user's
// cache directory, weir/tpch); else the shared SF 0.1 copy.

var cacheOnce sync.Map // dir -> *sync.Once

func dataDir(tb testing.TB) string {
	dir := os.Getenv("WEIR_TPCH_DIR")
	if dir == "" && os.Getenv("WEIR_TPCH_SF") != "" {
		dir = cachedTables(tb, os.Getenv("WEIR_TPCH_SF"))
	}
	if dir == "" {
		dir = "../../../shared/tpch/sf0.1"
	}
	if _, err := os.Stat(filepath.Join(dir, "lineitem.parquet")); err != nil {
		tb.Skipf("no TPC-H tables in %s (set WEIR_TPCH_DIR or WEIR_TPCH_SF)", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}

// cachedTables returns the cache directory of scale factor sf, making its
// tables first if they are not there.
func cachedTables(tb testing.TB, sf string) string {
	scale, err := strconv.ParseFloat(sf, 64)
	if err != nil || scale <= 0 {
		tb.Fatalf("WEIR_TPCH_SF=%q: want a positive scale factor", sf)
	}
	root := os.Getenv("WEIR_TPCH_CACHE")
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			tb.Fatal(err)
		}
		root = filepath.Join(c, "weir", "tpch")
	}
	dir := filepath.Join(root, "sf"+strconv.FormatFloat(scale, 'f', -1, 64))
	once, _ := cacheOnce.LoadOrStore(dir, new(sync.Once))
	var ferr error
	once.(*sync.Once).Do(func() { ferr = makeTables(dir, scale) })
	if ferr != nil {
		tb.Fatal(ferr)
	}
	return dir
}

// makeTables generates the tables of scale into dir unless dir holds them:
// weir's dbgen writes them into a scratch directory, DuckDB rewrites each
// with its default writer, and dir is renamed into place last, so an
// interrupted run leaves no half-made cache.
func makeTables(dir string, scale float64) error {
	if _, err := os.Stat(filepath.Join(dir, "lineitem.parquet")); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	raw, err := os.MkdirTemp(filepath.Dir(dir), ".gen-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(raw)
	gen := filepath.Join(raw, "dbgen")
	if err := dbgen.Generate(context.Background(), dbgen.Options{Scale: scale, Dir: gen}); err != nil {
		return err
	}
	out := filepath.Join(raw, "duckdb")
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	for _, t := range tables {
		q := fmt.Sprintf("COPY (SELECT * FROM read_parquet('%s')) TO '%s' (FORMAT parquet)",
			filepath.Join(gen, t+".parquet"), filepath.Join(out, t+".parquet"))
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("duckdb rewrite of %s: %w", t, err)
		}
	}
	return os.Rename(out, dir)
}
