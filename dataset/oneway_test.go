package dataset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/iterate"
	"github.com/weirdata/weir/optimizer"
)

// tpchPrograms returns the TPC-H queries as programs; none under the race
// detector (see oneway_tpch_test.go).
var tpchPrograms = func() []program { return nil }

// program is one job planned and run by the tests of this file: build adds it
// to env and returns its output, formatted as sorted lines once env ran.
type program struct {
	name  string
	build func(t *testing.T, env *dataset.Env) func() []string
}

// programs returns every TPC-H query over the SF 0.01 tables and every
// iteration job of the iterate package over small inputs, and a step that
// co-groups with a replayed loop-invariant input.
func programs() []program {
	out := tpchPrograms()
	var edges []iterate.Edge
	var weighted []iterate.WeightedEdge
	vertices := make([]int64, 40)
	for i := range vertices {
		vertices[i] = int64(i)
		if i%7 != 6 {
			edges = append(edges, iterate.Edge{Src: int64(i), Dst: int64(i + 1)})
			weighted = append(weighted, iterate.WeightedEdge{Src: int64(i), Dst: int64(i + 1), Weight: float64(i%3 + 1)})
		}
		edges = append(edges, iterate.Edge{Src: int64(i), Dst: int64((i * 5) % 40)})
	}
	var points []iterate.Point
	var samples []iterate.Sample
	for i := range 60 {
		x, y := float64(i%10), float64(i/10)
		points = append(points, iterate.Point{X: []float64{x, y}})
		samples = append(samples, iterate.Sample{X: []float64{x / 10, y / 6}, Y: 2*x/10 - y/6 + 0.5})
	}
	centroids := []iterate.Centroid{{ID: 1, X: []float64{1, 1}}, {ID: 2, X: []float64{8, 4}}}
	out = append(out,
		program{"closure", func(t *testing.T, env *dataset.Env) func() []string {
			return collect(iterate.TransitiveClosure(dataset.FromSlice(env, edges[:20]), 100))
		}},
		program{"components", func(t *testing.T, env *dataset.Env) func() []string {
			return collect(iterate.ConnectedComponents(dataset.FromSlice(env, vertices), dataset.FromSlice(env, edges), 100))
		}},
		program{"kmeans", func(t *testing.T, env *dataset.Env) func() []string {
			final, clustered := iterate.KMeans(dataset.FromSlice(env, points), dataset.FromSlice(env, centroids), 5)
			a := collect(dataset.Map(final, func(c iterate.Centroid) string { return fmt.Sprintf("%d %.9f", c.ID, c.X) }))
			b := collect(clustered)
			return func() []string { return append(a(), b()...) }
		}},
		program{"pagerank", func(t *testing.T, env *dataset.Env) func() []string {
			// ranks are sums whose order the partitioning decides: rounded
			ranks := dataset.Map(iterate.PageRank(dataset.FromSlice(env, vertices), dataset.FromSlice(env, edges),
				iterate.PageRankParams{Iterations: 5, Epsilon: -1}), func(p iterate.Page) string { return fmt.Sprintf("%d %.9f", p.ID, p.Rank) })
			return collect(ranks)
		}},
		program{"regression", func(t *testing.T, env *dataset.Env) func() []string {
			return collect(dataset.Map(iterate.LinearRegression(dataset.FromSlice(env, samples), 10, 1),
				func(m iterate.Model) string { return fmt.Sprintf("%.9f %.9f", m.B, m.W) }))
		}},
		program{"sssp", func(t *testing.T, env *dataset.Env) func() []string {
			return collect(iterate.ShortestPaths(dataset.FromSlice(env, weighted), 0, 100))
		}},
		program{"cogroup-replay", func(t *testing.T, env *dataset.Env) func() []string {
			return collect(coGroupReplay(env, edges))
		}},
	)
	return out
}

// coGroupReplay is a bulk iteration whose step co-groups the partial solution
// with a loop-invariant input, which is replayed: the planner hashes both, and
// the hash of the invariant side moves in front of its replayer.
func coGroupReplay(env *dataset.Env, edges []iterate.Edge) *dataset.DataSet[iterate.Edge] {
	fixed := dataset.FromSlice(env, edges)
	return dataset.Iterate(dataset.FromSlice(env, edges), 3, func(_ *dataset.Iteration, cur *dataset.DataSet[iterate.Edge]) *dataset.DataSet[iterate.Edge] {
		return dataset.CoGroup(cur, fixed, func(e iterate.Edge) int64 { return e.Src }, func(e iterate.Edge) int64 { return e.Src },
			func(_ int64, as iter.Seq[iterate.Edge], bs iter.Seq[iterate.Edge], emit func(iterate.Edge)) {
				var n int64
				for range bs {
					n++
				}
				for a := range as {
					emit(iterate.Edge{Src: a.Src, Dst: a.Dst + n})
				}
			})
	})
}

func collect[T any](ds *dataset.DataSet[T]) func() []string {
	c := dataset.Collect(ds)
	return func() []string {
		var out []string
		for _, v := range c.Values() {
			out = append(out, fmt.Sprintf("%+v", v))
		}
		slices.Sort(out)
		return out
	}
}

func lines(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "|")
	}
	return out
}

func newEnv(t *testing.T, mode optimizer.ExecutionMode) *dataset.Env {
	return dataset.New(dataset.Options{Parallelism: 3, Memory: 64 << 20, TmpDir: t.TempDir(), BatchSize: 64, Mode: mode})
}

func explainJSON(t *testing.T, p *optimizer.Plan) string {
	t.Helper()
	b, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlanningIsOneWay plans every program twice: the program's model is the
// same before and after, and the two plans are identical.
func TestPlanningIsOneWay(t *testing.T) {
	for _, pr := range programs() {
		t.Run(pr.name, func(t *testing.T) {
			env := newEnv(t, optimizer.BatchExecution)
			pr.build(t, env)
			before := dataset.ModelOf(env)
			for _, n := range before.Nodes {
				if n.Decision.Ship != nil || n.Decision.Exchange != nil || n.Decision.Notes != nil {
					t.Fatalf("#%d %s: the program's model holds a decision", n.ID, n.Name)
				}
			}
			p1, err := env.Plan()
			if err != nil {
				t.Fatal(err)
			}
			p2, err := env.Plan()
			if err != nil {
				t.Fatal(err)
			}
			if after := dataset.ModelOf(env); !reflect.DeepEqual(before, after) {
				t.Errorf("planning changed the program's model")
			}
			if j1, j2 := explainJSON(t, p1), explainJSON(t, p2); j1 != j2 {
				t.Errorf("two plans differ:\n%s\n%s", j1, j2)
			}
			if pr.name == "cogroup-replay" && !strings.Contains(explainJSON(t, p1), "shipped HASH into its replayer") {
				t.Errorf("the co-group's invariant input is not hashed in front of its replayer")
			}
		})
	}
}

// explained is a node as EXPLAIN's JSON prints it.
type explained struct {
	ID          int    `json:"id"`
	Name        string `json:"name"`
	Parallelism int    `json:"parallelism"`
	Inputs      []struct {
		ID           int    `json:"id"`
		ShipStrategy string `json:"ship_strategy"`
		ExchangeMode string `json:"exchange_mode"`
	} `json:"inputs"`
}

// TestExplainShowsWhatRuns runs every program under the default execution
// mode and under BATCH, and compares the edges EXPLAIN prints for the plan
// that ran with the edges the flow graph ran: an input forwarded and
// pipelined may run in its producer's task; every other input is a flow edge
// into the consumer's task with the ship strategy and exchange mode EXPLAIN
// names, and no flow edge is left over. Every mode gives the same output.
func TestExplainShowsWhatRuns(t *testing.T) {
	for _, pr := range programs() {
		t.Run(pr.name, func(t *testing.T) {
			var want []string
			for _, mode := range []optimizer.ExecutionMode{optimizer.PipelinedExecution, optimizer.BatchExecution} {
				env := newEnv(t, mode)
				out := pr.build(t, env)
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if got := out(); want == nil {
					want = got
				} else if !slices.Equal(got, want) {
					t.Errorf("%s: the output differs from the default mode's", mode)
				}
				var doc struct{ Nodes []explained }
				if err := json.Unmarshal([]byte(explainJSON(t, res.Plan)), &doc); err != nil {
					t.Fatal(err)
				}
				checkEdges(t, mode, doc.Nodes, dataset.VertexOf(env), res)
			}
		})
	}
}

func checkEdges(t *testing.T, mode optimizer.ExecutionMode, nodes []explained, vertexOf []int, res *dataset.Result) {
	t.Helper()
	index := map[int]int{}
	for i, n := range nodes {
		index[n.ID] = i
	}
	vs, edges := res.Metrics.Vertices, res.Metrics.Edges
	used := make([]bool, len(edges))
	for i, n := range nodes {
		v := vertexOf[i]
		if !strings.Contains(vs[v].Name, n.Name) {
			t.Errorf("%s: #%d %s runs in vertex %q", mode, n.ID, n.Name, vs[v].Name)
		}
		if len(vs[v].Subtasks) != n.Parallelism {
			t.Errorf("%s: #%d %s: parallelism %d, ran %d subtasks", mode, n.ID, n.Name, n.Parallelism, len(vs[v].Subtasks))
		}
		for j, in := range n.Inputs {
			from := vertexOf[index[in.ID]]
			if from == v {
				if in.ShipStrategy != "FORWARD" || in.ExchangeMode != "PIPELINED" {
					t.Errorf("%s: #%d input %d is %s %s but runs chained", mode, n.ID, j, in.ShipStrategy, in.ExchangeMode)
				}
				continue
			}
			k := slices.IndexFunc(edges, func(e flow.EdgeInfo) bool { return e.From == from && e.To == v && e.Input == j })
			if k < 0 {
				t.Errorf("%s: #%d input %d (%s %s from #%d): no such flow edge", mode, n.ID, j, in.ShipStrategy, in.ExchangeMode, in.ID)
				continue
			}
			used[k] = true
			if e := edges[k]; e.Strategy.String() != in.ShipStrategy || e.Mode.String() != in.ExchangeMode {
				t.Errorf("%s: #%d input %d: EXPLAIN says %s %s, ran %s %s", mode, n.ID, j, in.ShipStrategy, in.ExchangeMode, e.Strategy, e.Mode)
			}
		}
	}
	for k, u := range used {
		if !u {
			e := edges[k]
			t.Errorf("%s: flow edge %s -> %s (input %d) is not in the plan", mode, vs[e.From].Name, vs[e.To].Name, e.Input)
		}
	}
}
