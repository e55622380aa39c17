package iterate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
)

// graphConfigs run the graph jobs at parallelism 1 and 2, with no budget and
// with one so small that the adjacency spills.
var graphConfigs = []config{{"p1", 1, 0}, {"p2", 2, 0}, {"p1-spill", 1, 48 << 10}, {"p2-spill", 2, 48 << 10}}

// checkSpill fails when a budgeted run kept its adjacency in memory or an
// unbudgeted one spilled it.
func checkSpill(t *testing.T, c config, s *graph.Stats) {
	t.Helper()
	if c.memory > 0 && s.Spilled == 0 {
		t.Errorf("the adjacency did not spill under a budget of %d bytes (%+v)", c.memory, *s)
	}
	if c.memory == 0 && s.Spilled != 0 {
		t.Errorf("the adjacency spilled in %d chunks with no budget", s.Spilled)
	}
}

// TestPageRankGraphFlinkData: Flink's 5-page test data, 3 iterations, gives
// the power iteration's ranks in 3 supersteps.
func TestPageRankGraphFlinkData(t *testing.T) {
	links := []Edge{{2, 1}, {5, 2}, {5, 4}, {4, 3}, {4, 2}, {1, 4}, {1, 2}, {1, 3}, {3, 5}}
	var edges [][2]int64
	for _, l := range links {
		edges = append(edges, [2]int64{l.Src - 1, l.Dst - 1})
	}
	want := oracle.PageRank(5, edges, Damping, 3)
	for _, c := range graphConfigs[:2] {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			var s graph.Stats
			got := dataset.Collect(PageRankGraph(dataset.FromSlice(env, []int64{1, 2, 3, 4, 5}), dataset.FromSlice(env, links),
				PageRankParams{Iterations: 3, Epsilon: -1}, &s))
			execute(t, env)
			if len(s.Supersteps) != 3 {
				t.Errorf("%d supersteps, want 3", len(s.Supersteps))
			}
			vals := got.Values()
			if len(vals) != 5 {
				t.Fatalf("%d ranks, want 5: %v", len(vals), vals)
			}
			for _, p := range vals {
				if math.Abs(p.Rank-want[p.ID-1]) > 1e-12 {
					t.Errorf("page %d: rank %.9f, the oracle's %.9f", p.ID, p.Rank, want[p.ID-1])
				}
			}
		})
	}
}

// TestPageRankGraphConverged: on an R-MAT graph of 2^11 vertices (dangling
// pages, pages without in-links, duplicate links, self-loops), the ranks at
// convergence and the number of supersteps are the power iteration's, at
// every parallelism and budget.
func TestPageRankGraphConverged(t *testing.T) {
	const n, eps = 1 << 11, 1e-6
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
	for _, c := range graphConfigs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			var s graph.Stats
			got := dataset.Collect(PageRankGraph(dataset.FromSlice(env, pages), dataset.FromSlice(env, links),
				PageRankParams{Iterations: 100, Epsilon: eps}, &s))
			execute(t, env)
			if len(s.Supersteps) != steps {
				t.Errorf("%d supersteps, the oracle converged after %d", len(s.Supersteps), steps)
			}
			checkSpill(t, c, &s)
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

// TestConnectedComponentsGraph: on a sparse R-MAT graph (many components,
// isolated vertices, self-loops), every vertex's component is union-find's,
// at every parallelism and budget.
func TestConnectedComponentsGraph(t *testing.T) {
	const n = 1 << 11
	g, err := gen.Graph(n, n/2, 5, 0.57, 0.19, 0.19)
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][2]int64
	var edges []Edge
	for s, d := range g {
		pairs = append(pairs, [2]int64{s, d})
		edges = append(edges, Edge{s, d})
	}
	vertices := make([]int64, n)
	for i := range vertices {
		vertices[i] = int64(i)
	}
	want := oracle.Components(vertices, pairs)
	for _, c := range graphConfigs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			var s graph.Stats
			got := dataset.Collect(ConnectedComponentsGraph(dataset.FromSlice(env, vertices), dataset.FromSlice(env, edges), 1000, &s))
			execute(t, env)
			vals := got.Values()
			if len(vals) != n {
				t.Fatalf("%d vertices, want %d", len(vals), n)
			}
			for _, x := range vals {
				if want[x.Vertex] != x.Component {
					t.Fatalf("vertex %d in component %d, want %d", x.Vertex, x.Component, want[x.Vertex])
				}
			}
			if last := s.Supersteps[len(s.Supersteps)-1]; last.Updated != 0 || len(s.Supersteps) < 2 {
				t.Errorf("%d supersteps, the last updating %d vertices: want it to update none", len(s.Supersteps), last.Updated)
			}
			if s.Edges != 2*int64(len(edges)) {
				t.Errorf("%d adjacency entries, want %d (each edge both ways)", s.Edges, 2*len(edges))
			}
			checkSpill(t, c, &s)
		})
	}
}

// TestShortestPathsGraph: on a random weighted graph, the distances from the
// source equal Dijkstra's and unreachable vertices are left out, at every
// parallelism and budget; a source that is on no edge reaches only itself.
func TestShortestPathsGraph(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 2000
	var edges []WeightedEdge
	var oes []oracle.WeightedEdge
	for range 3 * n / 2 {
		e := WeightedEdge{r.Int64N(n), r.Int64N(n), math.Round(r.Float64()*1000) / 10}
		edges = append(edges, e)
		oes = append(oes, oracle.WeightedEdge{Src: e.Src, Dst: e.Dst, Weight: e.Weight})
	}
	for _, source := range []int64{edges[0].Src, n + 1} {
		want := oracle.ShortestPaths(source, oes)
		if source == edges[0].Src && (len(want) < n/4 || len(want) == n) {
			t.Fatalf("the source reaches %d vertices of %d: pick another graph", len(want), n)
		}
		for _, c := range graphConfigs {
			t.Run(c.name, func(t *testing.T) {
				env := newEnv(t, c)
				var s graph.Stats
				got := dataset.Collect(ShortestPathsGraph(dataset.FromSlice(env, edges), source, 1000, &s))
				execute(t, env)
				vals := got.Values()
				if len(vals) != len(want) {
					t.Fatalf("%d vertices reached, want %d", len(vals), len(want))
				}
				for _, d := range vals {
					w, ok := want[d.Vertex]
					if !ok || math.Abs(d.Distance-w) > 1e-9 {
						t.Fatalf("vertex %d at %v, want %v (reached: %v)", d.Vertex, d.Distance, w, ok)
					}
				}
				if source != n+1 {
					checkSpill(t, c, &s)
				}
			})
		}
	}
}
