package dataset

import (
	"iter"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/internal/golden"
	"github.com/weirdata/weir/optimizer"
)

// planRank and planEdge are the records of the planned graph programs.
type planRank struct {
	ID   int64
	Rank float64
}

type planEdge struct{ Src, Dst int64 }

type planAdjacency struct {
	ID    int64
	Dests []int64
}

// pageRankPlan builds a PageRank-like bulk iteration over pages and edges
// (sizes declared, no data): every superstep joins the ranks with the
// adjacency lists (loop-invariant), spreads each rank over its links and sums
// per page.
func pageRankPlan(env *Env, pages, edges int64, iterations int) {
	ps := FromSlice[int64](env, nil).WithEstimate(pages)
	links := FromSlice[planEdge](env, nil).WithEstimate(edges)
	adj := ReduceGroup(GroupBy(links, func(e planEdge) int64 { return e.Src }).On("id"),
		func(src int64, es iter.Seq[planEdge], emit func(planAdjacency)) {
			a := planAdjacency{ID: src}
			for e := range es {
				a.Dests = append(a.Dests, e.Dst)
			}
			emit(a)
		}).Forwards("id")
	initial := Map(ps, func(id int64) planRank { return planRank{ID: id, Rank: 1} })
	ranks := Iterate(initial, iterations, func(_ *Iteration, r *DataSet[planRank]) *DataSet[planRank] {
		withAdj := Join(r, adj, func(p planRank) int64 { return p.ID }, func(a planAdjacency) int64 { return a.ID },
			func(p *planRank, a *planAdjacency) planAdjacency { return planAdjacency{ID: int64(p.Rank), Dests: a.Dests} }).On("id")
		contribs := FlatMap(withAdj, func(a planAdjacency, emit func(planRank)) {
			for _, d := range a.Dests {
				emit(planRank{ID: d, Rank: float64(a.ID) / float64(len(a.Dests))})
			}
		}).WithSelectivity(float64(edges) / float64(max(pages, 1)))
		return GroupBy(contribs, func(p planRank) int64 { return p.ID }).On("id").
			Reduce(func(a, b planRank) planRank { return planRank{ID: a.ID, Rank: a.Rank + b.Rank} })
	})
	Collect(ranks)
}

// componentsPlan builds connected components as a delta iteration: the
// workset joins the (loop-invariant) edges, the minimum per vertex is kept
// when JoinSolution finds it smaller than the solution set's.
func componentsPlan(env *Env, vertices, edges int64, iterations int) {
	type vc struct{ V, C int64 }
	vs := Map(FromSlice[int64](env, nil).WithEstimate(vertices), func(v int64) vc { return vc{v, v} })
	es := FromSlice[planEdge](env, nil).WithEstimate(edges)
	vertex := func(x vc) int64 { return x.V }
	res := IterateDelta(vs, vs, vertex, iterations,
		func(it *DeltaIteration[vc, int64], ws *DataSet[vc]) (*DataSet[vc], *DataSet[vc]) {
			cands := Join(ws, es, vertex, func(e planEdge) int64 { return e.Src },
				func(x *vc, e *planEdge) vc { return vc{e.Dst, x.C} })
			mins := GroupBy(cands, vertex).Reduce(func(a, b vc) vc { return vc{a.V, min(a.C, b.C)} })
			delta := JoinSolution(mins, it, vertex, func(w *vc, sol *vc, emit func(vc)) {
				if sol != nil && w.C < sol.C {
					emit(*w)
				}
			})
			return delta, delta
		})
	Collect(res)
}

// TestLoopPlansGolden compares the plans of a PageRank-like bulk iteration
// and a connected-components delta iteration with testdata/loop_plans.txt.
func TestLoopPlansGolden(t *testing.T) {
	golden.RunFile(t, filepath.Join("testdata", "loop_plans.txt"), func(t *testing.T, d *golden.Case) string {
		arg := func(k string) int64 {
			v, err := strconv.ParseInt(d.Args[k], 10, 64)
			if err != nil {
				t.Fatalf("%s: %s: %v", d.Pos, k, err)
			}
			return v
		}
		env := New(Options{Parallelism: int(arg("parallelism")), Memory: 256 << 20})
		switch d.Cmd {
		case "pagerank":
			pageRankPlan(env, arg("pages"), arg("edges"), int(arg("iterations")))
		case "components":
			componentsPlan(env, arg("vertices"), arg("edges"), int(arg("iterations")))
		default:
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		}
		p, err := env.Plan()
		if err != nil {
			t.Fatal(err)
		}
		return p.Text()
	})
}

// findNode returns the first node of p whose name starts with prefix.
func findNode(t *testing.T, p *optimizer.Plan, prefix string) *optimizer.Node {
	t.Helper()
	for _, n := range p.Nodes {
		if strings.HasPrefix(n.Name, prefix) {
			return n
		}
	}
	t.Fatalf("no node %q in\n%s", prefix, p.Text())
	return nil
}

// TestLoopPlanIterationsAndStatic checks what dataset tells the planner about
// an iteration and what the planner makes of it: the step's operators run
// the expected number of supersteps, the join keeps its invariant side as
// the build side, shipped once, and the result is as large as the initial
// partial solution (bulk) or the solution set (delta), not the default.
func TestLoopPlanIterationsAndStatic(t *testing.T) {
	const pages, edges = 50_000, 2_000_000
	for _, iters := range []int{1, 7} {
		env := New(Options{Parallelism: 4, Memory: 256 << 20})
		pageRankPlan(env, pages, edges, iters)
		p, err := env.Plan()
		if err != nil {
			t.Fatal(err)
		}
		j := findNode(t, p, "Join at")
		if j.Iterations != iters || len(j.Static) != 2 || j.Static[0] || !j.Static[1] {
			t.Fatalf("iterations=%d: join has Iterations %d, Static %v; want %d, [false true]", iters, j.Iterations, j.Static, iters)
		}
		if j.Decision.Local != optimizer.HybridHashBuildSecond {
			t.Errorf("iterations=%d: the join builds %s, want on the static adjacency lists\n%s", iters, j.Decision.Local, p.Text())
		}
		if !strings.Contains(strings.Join(j.Decision.Notes, ";"), "static input 1 cached") {
			t.Errorf("iterations=%d: no note on the cached static input: %q", iters, j.Decision.Notes)
		}
		if r := findNode(t, p, "Result of"); r.Decision.Estimate.Rows != pages {
			t.Errorf("iterations=%d: result estimated at %d rows, want the initial %d", iters, r.Decision.Estimate.Rows, pages)
		}
		// the join's own cost: the static side is paid once, the ranks every superstep
		adjBytes := float64(j.Inputs[1].Decision.Estimate.Bytes)
		rankBytes := float64(j.Inputs[0].Decision.Estimate.Bytes)
		var want float64
		for i, s := range j.Decision.Ship {
			b, k := rankBytes, float64(iters)
			if i == 1 {
				b, k = adjBytes, 1
			}
			switch s {
			case optimizer.Hash:
				want += b * k
			case optimizer.Broadcast:
				want += b * 4 * k
			}
		}
		if got := j.Decision.Cost.Network; got != want {
			t.Errorf("iterations=%d: join network cost %g, want %g (ships %v)", iters, got, want, j.Decision.Ship)
		}
	}

	env := New(Options{Parallelism: 4, Memory: 256 << 20})
	componentsPlan(env, 30_000, 100_000, 100)
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	j := findNode(t, p, "Join at")
	if j.Iterations != optimizer.DefaultIterations {
		t.Errorf("a delta iteration of at most 100 supersteps: join Iterations %d, want %d", j.Iterations, optimizer.DefaultIterations)
	}
	if r := findNode(t, p, "Result of"); r.Decision.Estimate.Rows != 30_000 {
		t.Errorf("delta result estimated at %d rows, want the solution set's 30000", r.Decision.Estimate.Rows)
	}
	for _, n := range p.Nodes {
		if n.Kind == optimizer.Source && n.Iterations != 0 {
			t.Errorf("%s outside the loop has Iterations %d", n.Name, n.Iterations)
		}
	}
}
