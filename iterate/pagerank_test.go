package iterate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
)

// TestPageRankFlinkData: Flink's 5-page test data, 3 iterations, gives
// Flink's expected ranks and the oracle's.
func TestPageRankFlinkData(t *testing.T) {
	links := []Edge{{2, 1}, {5, 2}, {5, 4}, {4, 3}, {4, 2}, {1, 4}, {1, 2}, {1, 3}, {3, 5}}
	flink := map[int64]float64{1: 0.237, 2: 0.248, 3: 0.173, 4: 0.175, 5: 0.165}
	var edges [][2]int64
	for _, l := range links {
		edges = append(edges, [2]int64{l.Src - 1, l.Dst - 1})
	}
	want := oracle.PageRank(5, edges, Damping, 3)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			got := dataset.Collect(PageRank(dataset.FromSlice(env, []int64{1, 2, 3, 4, 5}), dataset.FromSlice(env, links),
				PageRankParams{Iterations: 3, Epsilon: -1}))
			res := execute(t, env)
			if n := len(res.Iterations[0].Supersteps); n != 3 {
				t.Errorf("%d supersteps, want 3", n)
			}
			vals := got.Values()
			if len(vals) != 5 {
				t.Fatalf("%d ranks, want 5: %v", len(vals), vals)
			}
			for _, p := range vals {
				if math.Abs(p.Rank-flink[p.ID]) > 0.01 {
					t.Errorf("page %d: rank %.4f, Flink's %.3f", p.ID, p.Rank, flink[p.ID])
				}
				if math.Abs(p.Rank-want[p.ID-1]) > 1e-12 {
					t.Errorf("page %d: rank %.9f, the oracle's %.9f", p.ID, p.Rank, want[p.ID-1])
				}
			}
		})
	}
}

// TestPageRankConverged: on an R-MAT graph of 2^8 vertices (dangling pages,
// pages without in-links, duplicate links and self-loops), the ranks at
// convergence and the number of supersteps are the oracle's.
func TestPageRankConverged(t *testing.T) {
	const n, eps = 256, 1e-5
	g, err := gen.Graph(n, 4*n, 11, 0.57, 0.19, 0.19)
	if err != nil {
		t.Fatal(err)
	}
	var edges [][2]int64
	var links []Edge
	for s, d := range g {
		edges = append(edges, [2]int64{s, d})
		links = append(links, Edge{s, d})
	}
	pages := make([]int64, n)
	for i := range pages {
		pages[i] = int64(i)
	}
	want, steps := oracle.PageRankConverged(n, edges, Damping, eps, 100)
	if steps >= 100 || steps < 5 {
		t.Fatalf("the oracle converged after %d steps: pick another epsilon", steps)
	}
	cs := configs
	if testing.Short() {
		cs = []config{configs[0], configs[2]} // a hundred supersteps each: one parallel config
	}
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			got := dataset.Collect(PageRank(dataset.FromSlice(env, pages), dataset.FromSlice(env, links),
				PageRankParams{Iterations: 100, Epsilon: eps}))
			res := execute(t, env)
			if s := len(res.Iterations[0].Supersteps); s != steps {
				t.Errorf("%d supersteps, the oracle converged after %d", s, steps)
			}
			vals := got.Values()
			if len(vals) != n {
				t.Fatalf("%d ranks, want %d", len(vals), n)
			}
			for _, p := range vals {
				if math.Abs(p.Rank-want[p.ID]) > 1e-12 {
					t.Fatalf("page %d: rank %.12f, the oracle's %.12f", p.ID, p.Rank, want[p.ID])
				}
			}
		})
	}
}

// TestRunPageRankSortedByID: RunPageRank over page ids that are neither a
// range nor compact (the graph's id index is a map), listed in shuffled
// order, writes one line per page in ascending id order with the power
// iteration's rank, at every parallelism and budget (the sort after the
// iteration passes the ranks through: the plan shows it).
func TestRunPageRankSortedByID(t *testing.T) {
	const n, eps = 1 << 10, 1e-6
	g, err := gen.Graph(n, 4*n, 13, 0.57, 0.19, 0.19)
	if err != nil {
		t.Fatal(err)
	}
	id := func(i int64) int64 { return i*7919 - 40_000 } // sparse, some negative
	dir := t.TempDir()
	var edges [][2]int64
	var links strings.Builder
	for s, d := range g {
		edges = append(edges, [2]int64{s, d})
		fmt.Fprintf(&links, "%d %d\n", id(s), id(d))
	}
	var pages strings.Builder
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		fmt.Fprintf(&pages, "%d\n", id(int64(i)))
	}
	pagesFile, linksFile := writeFile(t, dir, "pages.txt", pages.String()), writeFile(t, dir, "links.txt", links.String())
	want, _ := oracle.PageRankConverged(n, edges, Damping, eps, 100)
	for _, c := range graphConfigs {
		t.Run(c.name, func(t *testing.T) {
			lines := runSortedJob(t, c, n, func(o Options) error {
				return RunPageRank(context.Background(), o, PageRankInputs{Pages: pagesFile, Links: linksFile}, PageRankParams{Iterations: 100, Epsilon: eps})
			})
			for i, l := range lines {
				f := strings.Fields(l)
				if len(f) != 2 || f[0] != strconv.FormatInt(id(int64(i)), 10) {
					t.Fatalf("line %d is %q, want page %d first", i, l, id(int64(i)))
				}
				r, err := strconv.ParseFloat(f[1], 64)
				if err != nil || math.Abs(r-want[i]) > 1e-12 {
					t.Fatalf("line %d is %q, the oracle's rank is %.12f", i, l, want[i])
				}
			}
		})
	}
}
