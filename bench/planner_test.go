package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/tpch"
)

// tpchDir returns the TPC-H data the planner benchmarks read: WEIR_TPCH_DIR,
// else the shared SF 0.1 files next to the repository; it skips when neither
// exists.
func tpchDir(b *testing.B) string {
	dir := os.Getenv("WEIR_TPCH_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "tpch", "sf0.1")
	}
	if _, err := os.Stat(filepath.Join(dir, "lineitem.parquet")); err != nil {
		b.Skipf("no TPC-H data in %s (set WEIR_TPCH_DIR)", dir)
	}
	return dir
}

// BenchmarkTPCHPlanners runs every TPC-H query of the tpch package under the
// rule-based planner and the cost-based one, at parallelism 2 (the
// WEIR_BENCH_THREADS variable changes it), so that benchstat can compare them:
//
//	go test ./bench/ -run '^$' -bench TPCHPlanners -count 6 > planners.txt
//	benchstat -col /planner planners.txt
func BenchmarkTPCHPlanners(b *testing.B) {
	dir := tpchDir(b)
	par := 2
	if s := os.Getenv("WEIR_BENCH_THREADS"); s != "" {
		fmt.Sscan(s, &par)
	}
	planners := []struct {
		name string
		p    dataset.Planner
	}{{"simple", dataset.Simple{}}, {"costbased", dataset.CostBased{}}}
	for _, n := range tpch.Numbers() {
		for _, pl := range planners {
			b.Run(fmt.Sprintf("q=%02d/planner=%s", n, pl.name), func(b *testing.B) {
				for b.Loop() {
					env := dataset.New(dataset.Options{Parallelism: par, Memory: 1 << 30, TmpDir: b.TempDir(), Planner: pl.p})
					res, err := tpch.Run(context.Background(), env, dir, n)
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Rows) == 0 && n != 6 {
						b.Fatalf("q%d returned no rows", n)
					}
				}
			})
		}
	}
}
