package graph_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
)

// TestRecognizedCombiners: a scatter-gather iteration whose messages are
// combined by SumCombiner (float64, the order of additions shows in the
// bits) or MinCombiner (int64) gives the same values as with the same
// combiner written as a function of one's own (bit for bit at parallelism
// 1), at parallelism 1 and 2 and spilled; messages pulled over the in-neighbours (every vertex
// sends) and pushed (few send).
func TestRecognizedCombiners(t *testing.T) {
	const n = 2000
	vs, es, _ := randomGraph(11, n, 6*n, 0)
	for i := range vs {
		vs[i].Value = 1 / float64(i+3)
	}
	type fctx = graph.Context[int64, float64, float64, float64]
	sum := func(few bool, combine func(a, b float64) float64) func(env *dataset.Env) *dataset.DataSet[graph.Vertex[int64, float64]] {
		return func(env *dataset.Env) *dataset.DataSet[graph.Vertex[int64, float64]] {
			g := graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es))
			return graph.RunScatterGather(g, graph.ScatterGather[int64, float64, float64, float64]{
				Scatter: func(c *fctx, v graph.Vertex[int64, float64]) {
					if !few || v.ID%97 == 0 {
						c.SendToAllNeighbors(v.Value / 3)
					}
				},
				Gather: func(c *fctx, v graph.Vertex[int64, float64], msgs []float64) {
					if len(msgs) > 0 {
						c.SetNewVertexValue(v.Value/2 + msgs[0])
					}
				},
				Combine: combine,
			}, graph.Options{MaxIterations: 4, AllActive: true})
		}
	}
	vi := make([]graph.Vertex[int64, int64], n)
	for i := range vi {
		vi[i] = graph.Vertex[int64, int64]{ID: int64(i), Value: int64(i*7919) % n}
	}
	ei := make([]graph.Edge[int64, struct{}], len(es))
	for i, e := range es {
		ei[i] = graph.Edge[int64, struct{}]{Src: e.Src, Dst: e.Dst}
	}
	type ictx = graph.Context[int64, int64, struct{}, int64]
	least := func(combine func(a, b int64) int64) func(env *dataset.Env) *dataset.DataSet[graph.Vertex[int64, int64]] {
		return func(env *dataset.Env) *dataset.DataSet[graph.Vertex[int64, int64]] {
			g := graph.FromDataSet(dataset.FromSlice(env, vi), dataset.FromSlice(env, ei))
			return graph.RunScatterGather(g, graph.ScatterGather[int64, int64, struct{}, int64]{
				Scatter: func(c *ictx, v graph.Vertex[int64, int64]) { c.SendToAllNeighbors(v.Value) },
				Gather: func(c *ictx, v graph.Vertex[int64, int64], m []int64) {
					if m[0] < v.Value {
						c.SetNewVertexValue(m[0])
					}
				},
				Combine: combine,
			}, graph.Options{MaxIterations: 100, Direction: graph.All})
		}
	}
	for _, c := range configs {
		for _, few := range []bool{false, true} {
			t.Run(fmt.Sprintf("sum/few=%v/%s", few, c.name), func(t *testing.T) {
				got := runValues(t, c, sum(few, graph.SumCombiner[float64]()))
				want := runValues(t, c, sum(few, func(a, b float64) float64 { return a + b }))
				for i := range want {
					// bit for bit at parallelism 1; at 2 the vertices' arrival,
					// and so the order in which messages meet, varies by run
					g, w := got[i].Value, want[i].Value
					if c.parallelism == 1 && math.Float64bits(g) != math.Float64bits(w) || math.Abs(g-w) > 1e-12*math.Abs(w) {
						t.Fatalf("vertex %d: %v, want %v", got[i].ID, got[i].Value, want[i].Value)
					}
				}
			})
		}
		t.Run("min/"+c.name, func(t *testing.T) {
			got := runValues(t, c, least(graph.MinCombiner[int64]()))
			want := runValues(t, c, least(func(a, b int64) int64 { return min(a, b) }))
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got[:10], want[:10])
			}
		})
	}
}

// runValues runs the iteration mk builds and returns its vertices by ID.
func runValues[VV any](t *testing.T, c config, mk func(env *dataset.Env) *dataset.DataSet[graph.Vertex[int64, VV]]) []graph.Vertex[int64, VV] {
	t.Helper()
	env := newEnv(t, c)
	out := dataset.Collect(mk(env))
	execute(t, env)
	vs := out.Values()
	slices.SortFunc(vs, func(a, b graph.Vertex[int64, VV]) int { return int(a.ID - b.ID) })
	return vs
}
