package graph_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
	"github.com/weirdata/weir/internal/oracle"
)

type config struct {
	name        string
	parallelism int
	memory      int64
}

var configs = []config{{"p1", 1, 0}, {"p2", 2, 0}, {"p2-spill", 2, 40 << 10}}

// newEnv returns an Env for c whose spill directory must be empty after the
// test.
func newEnv(t *testing.T, c config) *dataset.Env {
	t.Helper()
	tmp := t.TempDir()
	t.Cleanup(func() {
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("spill files left in %s: %v", tmp, ents)
		}
	})
	return dataset.New(dataset.Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: 4096, TmpDir: tmp, BatchSize: 64})
}

func execute(t *testing.T, env *dataset.Env) {
	t.Helper()
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
}

type wctx = graph.Context[int64, float64, float64, float64]

// sssp runs single-source shortest paths from src in the given model.
func sssp(model string, g *graph.Graph[int64, float64, float64], src int64, o graph.Options) *dataset.DataSet[graph.Vertex[int64, float64]] {
	relax := func(c *wctx, v graph.Vertex[int64, float64]) {
		d := v.Value
		c.SendAlongEdges(func(w float64) float64 { return d + w })
	}
	switch model {
	case "vertex-centric":
		return graph.RunVertexCentric(g, graph.VertexCentric[int64, float64, float64, float64]{
			Compute: func(c *wctx, v graph.Vertex[int64, float64], msgs []float64) {
				if len(msgs) == 0 {
					if v.ID == src {
						relax(c, v)
					}
					return
				}
				if msgs[0] < v.Value {
					c.SetNewVertexValue(msgs[0])
					relax(c, graph.Vertex[int64, float64]{ID: v.ID, Value: msgs[0]})
				}
			},
			Combine: func(a, b float64) float64 { return min(a, b) },
		}, o)
	case "scatter-gather":
		return graph.RunScatterGather(g, graph.ScatterGather[int64, float64, float64, float64]{
			Scatter: func(c *wctx, v graph.Vertex[int64, float64]) {
				if !math.IsInf(v.Value, 1) {
					relax(c, v)
				}
			},
			Gather: func(c *wctx, v graph.Vertex[int64, float64], msgs []float64) {
				if m := slices.Min(msgs); m < v.Value {
					c.SetNewVertexValue(m)
				}
			},
		}, o)
	default:
		return graph.RunGatherSumApply(g, graph.GatherSumApply[int64, float64, float64, float64]{
			Gather: func(d, w float64) float64 { return d + w },
			Sum:    func(a, b float64) float64 { return min(a, b) },
			Apply: func(sum, d float64) (float64, bool) {
				return sum, sum < d
			},
		}, o)
	}
}

var models = []string{"vertex-centric", "scatter-gather", "gather-sum-apply"}

// TestShortestPathsGellyData follows Gelly's SingleSourceShortestPathsITCase
// (and its GSA and scatter-gather variants): SingleSourceShortestPathsData's
// edges from vertex 1 give its RESULTED_SINGLE_SOURCE_SHORTEST_PATHS, in
// every model.
func TestShortestPathsGellyData(t *testing.T) {
	edges := []graph.Edge[int64, float64]{{1, 2, 12}, {1, 3, 13}, {2, 3, 23}, {3, 4, 34}, {3, 5, 35}, {4, 5, 45}, {5, 1, 51}}
	want := map[int64]float64{1: 0, 2: 12, 3: 13, 4: 47, 5: 48}
	for _, model := range models {
		for _, c := range configs[:2] {
			t.Run(model+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				var vs []graph.Vertex[int64, float64]
				for id := range int64(5) {
					vs = append(vs, graph.Vertex[int64, float64]{ID: id + 1, Value: math.Inf(1)})
				}
				vs[0].Value = 0
				got := dataset.Collect(sssp(model, graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, edges)), 1,
					graph.Options{MaxIterations: 10}))
				execute(t, env)
				if vals := got.Values(); len(vals) != len(want) {
					t.Fatalf("%d vertices, want %d", len(vals), len(want))
				}
				for _, v := range got.Values() {
					if v.Value != want[v.ID] {
						t.Errorf("vertex %d at %v, want %v", v.ID, v.Value, want[v.ID])
					}
				}
			})
		}
	}
}

// randomGraph returns n vertices at +Inf but src at 0 and m random weighted
// edges, with the edges for the oracle.
func randomGraph(seed uint64, n, m int, src int64) ([]graph.Vertex[int64, float64], []graph.Edge[int64, float64], []oracle.WeightedEdge) {
	r := rand.New(rand.NewPCG(seed, 1))
	vs := make([]graph.Vertex[int64, float64], n)
	for i := range vs {
		vs[i] = graph.Vertex[int64, float64]{ID: int64(i), Value: math.Inf(1)}
	}
	vs[src].Value = 0
	var es []graph.Edge[int64, float64]
	var oes []oracle.WeightedEdge
	for range m {
		e := graph.Edge[int64, float64]{Src: r.Int64N(int64(n)), Dst: r.Int64N(int64(n)), Value: math.Round(r.Float64()*1000) / 10}
		es = append(es, e)
		oes = append(oes, oracle.WeightedEdge{Src: e.Src, Dst: e.Dst, Weight: e.Value})
	}
	return vs, es, oes
}

// TestShortestPathsSpilled: Dijkstra's distances in every model at
// parallelism 1 and 2, under a budget that keeps the weighted adjacency in
// several spilled chunks, and under one where the edges spill while they
// come and the adjacency is placed back in memory.
func TestShortestPathsSpilled(t *testing.T) {
	const n, src = 3000, 0
	vs, es, oes := randomGraph(7, n, 4*n, src)
	want := oracle.ShortestPaths(src, oes)
	if len(want) < n/2 {
		t.Fatalf("the source reaches %d of %d vertices: pick another graph", len(want), n)
	}
	back := []config{{"p1-back", 1, 512 << 10}, {"p2-back", 2, 512 << 10}}
	for _, model := range models {
		for _, c := range append(slices.Clone(configs), back...) {
			t.Run(model+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				var s graph.Stats
				got := dataset.Collect(sssp(model, graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es)), src,
					graph.Options{MaxIterations: 1000, Stats: &s}))
				execute(t, env)
				switch {
				case c.memory == 0 && (s.Spilled != 0 || s.EdgesSpilled):
					t.Errorf("spilled with no budget: %d chunks, edges %v", s.Spilled, s.EdgesSpilled)
				case strings.HasSuffix(c.name, "-back") && (s.Spilled != 0 || !s.EdgesSpilled):
					t.Errorf("under %d bytes: %d spilled chunks, edges spilled %v; want the edges spilled and placed back", c.memory, s.Spilled, s.EdgesSpilled)
				case c.memory > 0 && !strings.HasSuffix(c.name, "-back") && s.Spilled < 2:
					t.Errorf("%d spilled chunks under a budget of %d bytes, want several", s.Spilled, c.memory)
				}
				if s.Edges != int64(len(es)) || s.Vertices != n {
					t.Errorf("%d vertices and %d entries, want %d and %d", s.Vertices, s.Edges, n, len(es))
				}
				reached := 0
				for _, v := range got.Values() {
					w, ok := want[v.ID]
					if !ok {
						if !math.IsInf(v.Value, 1) {
							t.Fatalf("vertex %d at %v, unreachable", v.ID, v.Value)
						}
						continue
					}
					reached++
					if math.Abs(v.Value-w) > 1e-9 {
						t.Fatalf("vertex %d at %v, want %v", v.ID, v.Value, w)
					}
				}
				if reached != len(want) {
					t.Errorf("%d vertices reached, want %d", reached, len(want))
				}
			})
		}
	}
}

type sctx = graph.Context[string, string, struct{}, string]

// TestMessagesUncombined: without a combiner, vertex-centric Compute and
// scatter-gather Gather get every message sent to the vertex (duplicate
// edges send twice); string keys go through the map index; edges to keys
// that are no vertex are left out, and a repeated vertex key is kept once.
func TestMessagesUncombined(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 300
	name := func(i int64) string { return fmt.Sprintf("v%03d", i) }
	var vs []graph.Vertex[string, string]
	for i := range int64(n) {
		vs = append(vs, graph.Vertex[string, string]{ID: name(i)})
	}
	vs = append(vs, graph.Vertex[string, string]{ID: name(0)})
	var es []graph.Edge[string, struct{}]
	senders := map[string][]string{}
	for range 4 * n {
		s, d := r.Int64N(n+20), r.Int64N(n+20) // some ends are no vertex
		es = append(es, graph.Edge[string, struct{}]{Src: name(s), Dst: name(d)})
		if s < n && d < n {
			senders[name(d)] = append(senders[name(d)], name(s))
		}
	}
	for k := range senders {
		slices.Sort(senders[k])
	}
	joined := func(msgs []string) string {
		m := slices.Clone(msgs)
		slices.Sort(m)
		return strings.Join(m, ",")
	}
	for _, model := range []string{"vertex-centric", "scatter-gather"} {
		for _, c := range configs {
			t.Run(model+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				g := graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es))
				var s graph.Stats
				o := graph.Options{MaxIterations: 10, Stats: &s}
				var out *dataset.DataSet[graph.Vertex[string, string]]
				if model == "vertex-centric" {
					out = graph.RunVertexCentric(g, graph.VertexCentric[string, string, struct{}, string]{
						Compute: func(c *sctx, v graph.Vertex[string, string], msgs []string) {
							if c.Superstep() == 1 {
								c.SendToAllNeighbors(v.ID)
								return
							}
							c.SetNewVertexValue(joined(msgs))
						},
					}, o)
				} else {
					out = graph.RunScatterGather(g, graph.ScatterGather[string, string, struct{}, string]{
						Scatter: func(c *sctx, v graph.Vertex[string, string]) {
							if c.Superstep() == 1 {
								c.SendToAllNeighbors(v.ID)
							}
						},
						Gather: func(c *sctx, v graph.Vertex[string, string], msgs []string) {
							if j := joined(msgs); j != v.Value {
								c.SetNewVertexValue(j)
							}
						},
					}, o)
				}
				got := dataset.Collect(out)
				execute(t, env)
				vals := got.Values()
				if len(vals) != n {
					t.Fatalf("%d vertices, want %d", len(vals), n)
				}
				for _, v := range vals {
					if w := strings.Join(senders[v.ID], ","); v.Value != w {
						t.Fatalf("vertex %s got %q, want %q", v.ID, v.Value, w)
					}
				}
				// superstep 2 sends nothing
				if len(s.Supersteps) != 2 || s.Supersteps[1].Messages != 0 {
					t.Errorf("supersteps %+v: want 2, the last sending nothing", s.Supersteps)
				}
			})
		}
	}
}

// TestDirections: in gather-sum-apply over In, a vertex's value becomes the
// number of hops from it to the target along directed edges (BFS on the
// reversed edges by the oracle's Dijkstra with unit weights); over All, the
// hops in the undirected graph. Keys are sparse int64 (the map index).
func TestDirections(t *testing.T) {
	const n, target = 500, 7
	key := func(i int64) int64 { return i * 1_000_003 }
	r := rand.New(rand.NewPCG(9, 9))
	var es []graph.Edge[int64, struct{}]
	var rev, both []oracle.WeightedEdge
	for range 2 * n {
		s, d := r.Int64N(n), r.Int64N(n)
		es = append(es, graph.Edge[int64, struct{}]{Src: key(s), Dst: key(d)})
		rev = append(rev, oracle.WeightedEdge{Src: key(d), Dst: key(s), Weight: 1})
		both = append(both, oracle.WeightedEdge{Src: key(d), Dst: key(s), Weight: 1}, oracle.WeightedEdge{Src: key(s), Dst: key(d), Weight: 1})
	}
	for _, dir := range []graph.Direction{graph.In, graph.All} {
		want := oracle.ShortestPaths(key(target), rev)
		if dir == graph.All {
			want = oracle.ShortestPaths(key(target), both)
		}
		for _, c := range configs {
			t.Run(dir.String()+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				var vs []graph.Vertex[int64, int64]
				for i := range int64(n) {
					h := int64(math.MaxInt64)
					if i == target {
						h = 0
					}
					vs = append(vs, graph.Vertex[int64, int64]{ID: key(i), Value: h})
				}
				got := dataset.Collect(graph.RunGatherSumApply(graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es)),
					graph.GatherSumApply[int64, int64, struct{}, int64]{
						Gather: func(h int64, _ struct{}) int64 { return min(h, math.MaxInt64-1) + 1 },
						Sum:    func(a, b int64) int64 { return min(a, b) },
						Apply:  func(h, cur int64) (int64, bool) { return h, h < cur },
					}, graph.Options{MaxIterations: n, Direction: dir}))
				execute(t, env)
				for _, v := range got.Values() {
					w, ok := want[v.ID]
					if !ok && v.Value != math.MaxInt64 || ok && float64(v.Value) != w {
						t.Fatalf("vertex %d: %d hops, want %v (reaches: %v)", v.ID, v.Value, w, ok)
					}
				}
			})
		}
	}
}

// TestFailures: a panicking user function fails the job with an error that
// names the iteration and the superstep; MaxIterations below 1 and a
// missing function fail it.
func TestFailures(t *testing.T) {
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			vs := []graph.Vertex[int64, float64]{{1, 0}, {2, 0}}
			es := []graph.Edge[int64, float64]{{1, 2, 1}, {2, 1, 1}}
			g := graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es))
			dataset.Collect(graph.RunVertexCentric(g, graph.VertexCentric[int64, float64, float64, float64]{
				Compute: func(c *wctx, v graph.Vertex[int64, float64], _ []float64) {
					if c.Superstep() == 2 {
						panic("boom")
					}
					c.SendToAllNeighbors(1)
				},
			}, graph.Options{MaxIterations: 5}))
			_, err := env.Execute(context.Background())
			if err == nil || !strings.Contains(err.Error(), "vertex-centric iteration: superstep 2: boom") {
				t.Errorf("error %v, want the panic of superstep 2", err)
			}

			env = newEnv(t, c)
			g = graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es))
			dataset.Collect(sssp("gather-sum-apply", g, 1, graph.Options{}))
			if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "MaxIterations 0") {
				t.Errorf("error %v, want one naming MaxIterations", err)
			}

			env = newEnv(t, c)
			g = graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es))
			dataset.Collect(graph.RunGatherSumApply(g, graph.GatherSumApply[int64, float64, float64, float64]{
				Gather: func(d, w float64) float64 { return d + w },
			}, graph.Options{MaxIterations: 3}))
			if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "want Gather, Sum and Apply") {
				t.Errorf("error %v, want one naming the missing functions", err)
			}
		})
	}
}

type hctx = graph.Context[int64, int64, struct{}, int64]

// TestBroadcasts: hop counts from a source by a vertex-centric iteration in
// which a vertex that improves sends its count plus one to all neighbours,
// combined by their minimum, equal Dijkstra's with unit weights over Out, In
// and All. The frontier grows from one vertex to most of the graph, so the
// messages are pushed along the edges while they are few and pulled over
// the reverse adjacency when they are many (and pushed from the spilled
// chunks under the small budget).
func TestBroadcasts(t *testing.T) {
	const n, source = 4000, 3
	r := rand.New(rand.NewPCG(11, 12))
	var es []graph.Edge[int64, struct{}]
	var fwd, rev, both []oracle.WeightedEdge
	for range 3 * n {
		s, d := r.Int64N(n), r.Int64N(n)
		es = append(es, graph.Edge[int64, struct{}]{Src: s, Dst: d})
		fwd = append(fwd, oracle.WeightedEdge{Src: s, Dst: d, Weight: 1})
		rev = append(rev, oracle.WeightedEdge{Src: d, Dst: s, Weight: 1})
		both = append(both, oracle.WeightedEdge{Src: s, Dst: d, Weight: 1}, oracle.WeightedEdge{Src: d, Dst: s, Weight: 1})
	}
	oracles := map[graph.Direction][]oracle.WeightedEdge{graph.Out: fwd, graph.In: rev, graph.All: both}
	for _, dir := range []graph.Direction{graph.Out, graph.In, graph.All} {
		want := oracle.ShortestPaths(source, oracles[dir])
		if len(want) < n/2 {
			t.Fatalf("%v: the source reaches %d of %d vertices: pick another graph", dir, len(want), n)
		}
		for _, c := range configs {
			t.Run(dir.String()+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				var vs []graph.Vertex[int64, int64]
				for i := range int64(n) {
					h := int64(math.MaxInt64)
					if i == source {
						h = 0
					}
					vs = append(vs, graph.Vertex[int64, int64]{ID: i, Value: h})
				}
				got := dataset.Collect(graph.RunVertexCentric(graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es)),
					graph.VertexCentric[int64, int64, struct{}, int64]{
						Compute: func(c *hctx, v graph.Vertex[int64, int64], msgs []int64) {
							h := v.Value
							if len(msgs) > 0 && msgs[0] < h {
								h = msgs[0]
								c.SetNewVertexValue(h)
							} else if c.Superstep() > 1 || h != 0 {
								return
							}
							c.SendToAllNeighbors(h + 1)
						},
						Combine: func(a, b int64) int64 { return min(a, b) },
					}, graph.Options{MaxIterations: n, Direction: dir}))
				execute(t, env)
				for _, v := range got.Values() {
					w, ok := want[v.ID]
					if !ok && v.Value != math.MaxInt64 || ok && float64(v.Value) != w {
						t.Fatalf("vertex %d: %d hops, want %v (reached: %v)", v.ID, v.Value, w, ok)
					}
				}
			})
		}
	}
}

// TestResultInKeyOrder checks the order of an iteration's result with int64
// keys: ascending by key however the vertices arrive, whether their keys
// fill a range (ids are the keys), lie in a compact range (ids through a
// table, in arrival order) or are sparse (through a map). The iteration adds
// its in-degree to each vertex's value; the oracle counts the edges.
func TestResultInKeyOrder(t *testing.T) {
	keysets := map[string]func(i int64) int64{
		"range":   func(i int64) int64 { return i - 50 },
		"compact": func(i int64) int64 { return 3 * i },
		"sparse":  func(i int64) int64 { return i*1_000_003 - 7 },
	}
	const n = 600
	type vctx = graph.Context[int64, int64, struct{}, int64]
	for name, key := range keysets {
		for _, c := range configs {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(7, 11))
				vs := make([]graph.Vertex[int64, int64], n)
				for i, p := range r.Perm(n) {
					vs[i] = graph.Vertex[int64, int64]{ID: key(int64(p)), Value: int64(p)}
				}
				var es []graph.Edge[int64, struct{}]
				indeg := map[int64]int64{}
				for range 4 * n {
					s, d := key(r.Int64N(n)), key(r.Int64N(n))
					es = append(es, graph.Edge[int64, struct{}]{Src: s, Dst: d})
					indeg[d]++
				}
				env := newEnv(t, c)
				g := graph.FromDataSet(dataset.FromSlice(env, vs), dataset.FromSlice(env, es))
				out := dataset.Collect(graph.RunScatterGather(g, graph.ScatterGather[int64, int64, struct{}, int64]{
					Scatter: func(c *vctx, v graph.Vertex[int64, int64]) { c.SendToAllNeighbors(1) },
					Gather: func(c *vctx, v graph.Vertex[int64, int64], msgs []int64) {
						c.SetNewVertexValue(v.Value + msgs[0])
					},
					Combine: graph.SumCombiner[int64](),
				}, graph.Options{MaxIterations: 1}))
				execute(t, env)
				got := out.Values()
				if len(got) != n {
					t.Fatalf("%d vertices, want %d", len(got), n)
				}
				for i, v := range got {
					if want := key(int64(i)); v.ID != want || v.Value != int64(i)+indeg[want] {
						t.Fatalf("vertex %d is %+v, want {ID:%d Value:%d}", i, v, want, int64(i)+indeg[want])
					}
				}
			})
		}
	}
}
