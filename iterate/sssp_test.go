package iterate

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/oracle"
)

// TestShortestPaths: on a random weighted graph, the distances from the
// source equal Dijkstra's, and unreachable vertices are left out.
func TestShortestPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 400
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
		for _, c := range configs {
			t.Run(c.name, func(t *testing.T) {
				env := newEnv(t, c)
				got := dataset.Collect(ShortestPaths(dataset.FromSlice(env, edges), source, 1000))
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
			})
		}
	}
}

// relaxed is the distances from source after rounds synchronous rounds of
// Bellman-Ford relaxation over edges (each round relaxes every edge from
// the distances of the round before), with the vertices reached.
func relaxed(source int64, edges []WeightedEdge, rounds int) map[int64]float64 {
	dist := map[int64]float64{source: 0}
	for range rounds {
		next := maps.Clone(dist)
		for _, e := range edges {
			if d, ok := dist[e.Src]; ok {
				if cur, ok := next[e.Dst]; !ok || d+e.Weight < cur {
					next[e.Dst] = d + e.Weight
				}
			}
		}
		dist = next
	}
	return dist
}

// TestShortestPathsIterations: with few iterations both formulations stop
// after the same rounds of relaxation, on a graph with long paths and
// negative weights (no negative cycle): their distances are those of that
// many synchronous Bellman-Ford rounds.
func TestShortestPathsIterations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 60
	var edges []WeightedEdge
	for v := range int64(n - 1) { // a chain, plus forward shortcuts
		edges = append(edges, WeightedEdge{v, v + 1, float64(r.IntN(10)) - 2})
		if to := v + 2 + r.Int64N(5); to < n && r.IntN(3) == 0 {
			edges = append(edges, WeightedEdge{v, to, float64(r.IntN(30))})
		}
	}
	for _, rounds := range []int{1, 2, 3, 5, 8, 1000} {
		want := relaxed(0, edges, rounds)
		for name, program := range map[string]func(env *dataset.Env) *dataset.DataSet[Distance]{
			"dataset": func(env *dataset.Env) *dataset.DataSet[Distance] {
				return ShortestPaths(dataset.FromSlice(env, edges), 0, rounds)
			},
			"graph": func(env *dataset.Env) *dataset.DataSet[Distance] {
				return ShortestPathsGraph(dataset.FromSlice(env, edges), 0, rounds, nil)
			},
		} {
			env := newEnv(t, config{"p2", 2, 0})
			got := dataset.Collect(program(env))
			execute(t, env)
			vals := got.Values()
			if len(vals) != len(want) {
				t.Fatalf("%s, %d rounds: %d vertices reached, want %d", name, rounds, len(vals), len(want))
			}
			for _, d := range vals {
				if w, ok := want[d.Vertex]; !ok || d.Distance != w {
					t.Fatalf("%s, %d rounds: vertex %d at %v, want %v (reached: %v)", name, rounds, d.Vertex, d.Distance, w, ok)
				}
			}
		}
	}
}

// TestRunShortestPathsSortedByID: the job writes the distances of the
// vertices the source reaches sorted by vertex, its final sort passing the
// graph iteration's ordered output through, at every parallelism and
// budget, with sparse, partly negative vertex ids.
func TestRunShortestPathsSortedByID(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 1000
	id := func(i int64) int64 { return i*7919 - 40_000 }
	var el strings.Builder
	var oes []oracle.WeightedEdge
	for range 2 * n {
		s, d, w := id(r.Int64N(n)), id(r.Int64N(n)), math.Round(r.Float64()*1000)/10
		fmt.Fprintf(&el, "%d %d %s\n", s, d, formatFloat(w))
		oes = append(oes, oracle.WeightedEdge{Src: s, Dst: d, Weight: w})
	}
	source := oes[0].Src
	want := oracle.ShortestPaths(source, oes)
	if len(want) < n/4 {
		t.Fatalf("the source reaches %d vertices of %d: pick another graph", len(want), n)
	}
	vs := slices.Sorted(maps.Keys(want))
	ef := writeFile(t, t.TempDir(), "edges.txt", el.String())
	for _, c := range graphConfigs {
		t.Run(c.name, func(t *testing.T) {
			lines := runSortedJob(t, c, len(want), func(o Options) error {
				return RunShortestPaths(context.Background(), o, ef, source, 1000)
			})
			for i, l := range lines {
				var v int64
				var d float64
				if _, err := fmt.Sscanf(l, "%d %g", &v, &d); err != nil || v != vs[i] || math.Abs(d-want[v]) > 1e-9 {
					t.Fatalf("line %d is %q, want vertex %d at %v", i, l, vs[i], want[vs[i]])
				}
			}
		})
	}
}
