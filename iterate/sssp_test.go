package iterate

import (
	"math"
	"math/rand/v2"
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
