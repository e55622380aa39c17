package iterate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
)

// TestConnectedComponents: on a sparse R-MAT graph (many components, isolated
// vertices, self-loops), every vertex's component is union-find's, the
// worksets shrink to nothing, and under a tiny budget the solution set
// spills.
func TestConnectedComponents(t *testing.T) {
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
	for _, c := range append(slices.Clone(configs), config{"p3-tiny-memory", 3, 96 << 10}) {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			got := dataset.Collect(ConnectedComponents(dataset.FromSlice(env, vertices), dataset.FromSlice(env, edges), 1000))
			res := execute(t, env)
			vals := got.Values()
			if len(vals) != n {
				t.Fatalf("%d vertices, want %d", len(vals), n)
			}
			for _, x := range vals {
				if want[x.Vertex] != x.Component {
					t.Fatalf("vertex %d in component %d, want %d", x.Vertex, x.Component, want[x.Vertex])
				}
			}
			steps := res.Iterations[0].Supersteps
			ws := worksets(steps)
			if len(ws) < 2 || ws[len(ws)-1] != 0 || ws[len(ws)-2] >= ws[0] {
				t.Fatalf("worksets %v: want them to shrink to an empty one", ws)
			}
			if spilled := steps[len(steps)-1].SolutionSpilled; c.memory > 0 && spilled == 0 {
				t.Errorf("the solution set did not spill under a budget of %d bytes", c.memory)
			}
		})
	}
}

// TestRunConnectedComponentsSortedByID: sparse vertex ids, some negative,
// listed in shuffled order, come out of RunConnectedComponents sorted by
// vertex with union-find's components, at every parallelism and budget; the
// sort passes the iteration's ordered output through.
func TestRunConnectedComponentsSortedByID(t *testing.T) {
	const n = 1 << 10
	g, err := gen.Graph(n, n, 5, 0.57, 0.19, 0.19) // sparse enough for many components
	if err != nil {
		t.Fatal(err)
	}
	id := func(i int64) int64 { return i*7919 - 40_000 }
	dir := t.TempDir()
	var ids []int64
	var edges [][2]int64
	var el strings.Builder
	for s, d := range g {
		edges = append(edges, [2]int64{id(s), id(d)})
		fmt.Fprintf(&el, "%d %d\n", id(s), id(d))
	}
	var vl strings.Builder
	for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(n) {
		ids = append(ids, id(int64(i)))
		fmt.Fprintf(&vl, "%d\n", id(int64(i)))
	}
	vf, ef := writeFile(t, dir, "vertices.txt", vl.String()), writeFile(t, dir, "edges.txt", el.String())
	want := oracle.Components(ids, edges)
	for _, c := range graphConfigs {
		t.Run(c.name, func(t *testing.T) {
			lines := runSortedJob(t, c, n, func(o Options) error {
				return RunConnectedComponents(context.Background(), o, GraphInputs{Vertices: vf, Edges: ef}, 1000)
			})
			for i, l := range lines {
				v := id(int64(i))
				if want := fmt.Sprintf("%d %d", v, want[v]); l != want {
					t.Fatalf("line %d is %q, want %q", i, l, want)
				}
			}
		})
	}
}
