package iterate

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/oracle"
)

// TestTransitiveClosure: on a random sparse digraph with cycles and duplicate
// edges, the closure equals the oracle's.
func TestTransitiveClosure(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const n = 80
	var edges []Edge
	var pairs [][2]int64
	for range n + n/4 {
		e := Edge{r.Int64N(n), r.Int64N(n)}
		edges = append(edges, e, e)
		pairs = append(pairs, [2]int64{e.Src, e.Dst})
	}
	want := oracle.TransitiveClosure(pairs)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			got := dataset.Collect(TransitiveClosure(dataset.FromSlice(env, edges), 1000))
			execute(t, env)
			var vals [][2]int64
			for _, e := range got.Values() {
				vals = append(vals, [2]int64{e.Src, e.Dst})
			}
			slices.SortFunc(vals, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
			if !slices.Equal(vals, want) {
				t.Fatalf("%d pairs, the oracle's %d", len(vals), len(want))
			}
		})
	}
}
