package dataset

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
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
	Rank  float64
	Dests []int64
}

// pageRankPlan builds a PageRank-like bulk iteration over pages and edges
// (sizes declared, no data): every superstep joins the ranks with the
// adjacency lists (loop-invariant), spreads each rank over its links and sums
// per page. With declared, the keys are named (On, Forwards), so the planner
// sees the adjacency lists partitioned by page.
func pageRankPlan(env *Env, pages, edges int64, iterations int, declared bool) {
	ps := FromSlice[int64](env, nil).WithEstimate(pages)
	links := FromSlice[planEdge](env, nil).WithEstimate(edges)
	bySrc := GroupBy(links, func(e planEdge) int64 { return e.Src })
	if declared {
		bySrc = bySrc.On("id")
	}
	adj := ReduceGroup(bySrc, func(src int64, es iter.Seq[planEdge], emit func(planAdjacency)) {
		a := planAdjacency{ID: src}
		for e := range es {
			a.Dests = append(a.Dests, e.Dst)
		}
		emit(a)
	})
	if declared {
		adj = adj.Forwards("id")
	}
	initial := Map(ps, func(id int64) planRank { return planRank{ID: id, Rank: 1} })
	ranks := Iterate(initial, iterations, func(_ *Iteration, r *DataSet[planRank]) *DataSet[planRank] {
		withAdj := Join(r, adj, func(p planRank) int64 { return p.ID }, func(a planAdjacency) int64 { return a.ID },
			func(p *planRank, a *planAdjacency) planAdjacency {
				return planAdjacency{ID: p.ID, Rank: p.Rank, Dests: a.Dests}
			})
		if declared {
			withAdj = withAdj.On("id")
		}
		contribs := FlatMap(withAdj, func(a planAdjacency, emit func(planRank)) {
			for _, d := range a.Dests {
				emit(planRank{ID: d, Rank: a.Rank / float64(len(a.Dests))})
			}
		}).WithSelectivity(float64(edges) / float64(max(pages, 1)))
		byPage := GroupBy(contribs, func(p planRank) int64 { return p.ID })
		if declared {
			byPage = byPage.On("id")
		}
		return byPage.Reduce(func(a, b planRank) planRank { return planRank{ID: a.ID, Rank: a.Rank + b.Rank} })
	})
	Collect(ranks)
}

// planVC is a vertex and its component.
type planVC struct{ V, C int64 }

// componentsPlan builds connected components as a delta iteration over
// vertices and edges (each edge in both directions), declaring their sizes
// as vEst and eEst: the workset joins the (loop-invariant) edges, the
// minimum per vertex is kept when JoinSolution finds it smaller than the
// solution set's.
func componentsPlan(env *Env, vertices []int64, edges []planEdge, vEst, eEst int64, iterations int) *Collected[planVC] {
	vs := Map(FromSlice(env, vertices).WithEstimate(vEst), func(v int64) planVC { return planVC{v, v} })
	es := FromSlice(env, edges).WithEstimate(eEst)
	vertex := func(x planVC) int64 { return x.V }
	res := IterateDelta(vs, vs, vertex, iterations,
		func(it *DeltaIteration[planVC, int64], ws *DataSet[planVC]) (*DataSet[planVC], *DataSet[planVC]) {
			cands := Join(ws, es, vertex, func(e planEdge) int64 { return e.Src },
				func(x *planVC, e *planEdge) planVC { return planVC{e.Dst, x.C} })
			mins := GroupBy(cands, vertex).Reduce(func(a, b planVC) planVC { return planVC{a.V, min(a.C, b.C)} })
			delta := JoinSolution(mins, it, vertex, func(w *planVC, sol *planVC, emit func(planVC)) {
				if sol != nil && w.C < sol.C {
					emit(*w)
				}
			})
			return delta, delta
		})
	return Collect(res)
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
			_, declared := d.Arg("declared")
			pageRankPlan(env, arg("pages"), arg("edges"), int(arg("iterations")), declared)
		case "components":
			componentsPlan(env, nil, nil, arg("vertices"), arg("edges"), int(arg("iterations")))
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
		pageRankPlan(env, pages, edges, iters, true)
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
	componentsPlan(env, nil, nil, 30_000, 100_000, 100)
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

// TestPlanIsACopy checks that the plan Env.Plan hands out shares nothing
// with the program's own model: every node, input and SizeOf it points to is
// its own, and its Static flags are its own slices.
func TestPlanIsACopy(t *testing.T) {
	env := New(Options{Parallelism: 4, Memory: 256 << 20})
	pageRankPlan(env, 50_000, 2_000_000, 7, true)
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	model := map[*optimizer.Node]bool{}
	for _, n := range env.nodes {
		model[&n.opt] = true
	}
	own := map[*optimizer.Node]bool{}
	for _, n := range p.Nodes {
		own[n] = true
	}
	sizeOf, static := 0, 0
	for _, n := range p.Nodes {
		if model[n] {
			t.Fatalf("%s is the program's own node", n.Name)
		}
		for i, in := range n.Inputs {
			if !own[in] {
				t.Errorf("%s: input %d is not a node of the plan", n.Name, i)
			}
		}
		if n.SizeOf != nil {
			sizeOf++
			if !own[n.SizeOf] {
				t.Errorf("%s: SizeOf %s is not a node of the plan", n.Name, n.SizeOf.Name)
			}
		}
		if len(n.Static) > 0 {
			static++
		}
	}
	if sizeOf == 0 || static == 0 {
		t.Fatalf("the plan has %d nodes with SizeOf and %d with Static, want some of each", sizeOf, static)
	}
	for _, n := range env.nodes {
		for i := range n.opt.Static {
			n.opt.Static[i] = !n.opt.Static[i]
		}
	}
	defer func() {
		for _, n := range env.nodes {
			for i := range n.opt.Static {
				n.opt.Static[i] = !n.opt.Static[i]
			}
		}
	}()
	j := findNode(t, p, "Join at")
	if j.Static[0] || !j.Static[1] {
		t.Errorf("the plan's join Static %v changed with the program's, want [false true]", j.Static)
	}
}

// TestLoopPlansRun runs connected components under the strategies the
// planner picks for the step's join at two declared sizes and several
// parallelisms (the workset broadcast to the edges' partitions, both hashed,
// or the edges broadcast once; the edges always the cached build side) and
// compares the components with a union-find over the same graph.
func TestLoopPlansRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	const nv = 300
	vertices := make([]int64, nv)
	for i := range vertices {
		vertices[i] = int64(i)
	}
	var edges []planEdge
	for range 220 {
		a, b := rng.Int64N(nv), rng.Int64N(nv)
		edges = append(edges, planEdge{a, b}, planEdge{b, a})
	}
	// union-find: every vertex's component is the smallest vertex of its tree
	parent := make([]int64, nv)
	for i := range parent {
		parent[i] = int64(i)
	}
	var find func(x int64) int64
	find = func(x int64) int64 {
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	for _, e := range edges {
		a, b := find(e.Src), find(e.Dst)
		parent[max(a, b)] = min(a, b)
	}
	seen := map[[2]optimizer.Ship]bool{}
	for _, c := range allConfigs { // every parallelism: each picks another shipping
		for _, sizes := range [][2]int64{{1000, 1_000_000}, {30_000, 100_000}} {
			t.Run(fmt.Sprintf("%s/edges%d", c.name, sizes[1]), func(t *testing.T) {
				env := newEnv(t, c)
				got := componentsPlan(env, vertices, edges, sizes[0], sizes[1], 100)
				p, err := env.Plan()
				if err != nil {
					t.Fatal(err)
				}
				j := findNode(t, p, "Join at")
				if j.Decision.Local != optimizer.HybridHashBuildSecond {
					t.Fatalf("the join builds %s, want on the edges\n%s", j.Decision.Local, p.Text())
				}
				seen[[2]optimizer.Ship(j.Decision.Ship)] = true
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				comp := map[int64]int64{}
				for _, x := range got.Values() {
					if _, dup := comp[x.V]; dup {
						t.Fatalf("vertex %d twice in the result", x.V)
					}
					comp[x.V] = x.C
				}
				if len(comp) != nv {
					t.Fatalf("%d vertices in the result, want %d", len(comp), nv)
				}
				for v := range int64(nv) {
					if comp[v] != find(v) {
						t.Fatalf("vertex %d in component %d, want %d", v, comp[v], find(v))
					}
				}
			})
		}
	}
	// the sizes and parallelisms cover the three ways to build on the edges
	for _, want := range [][2]optimizer.Ship{
		{optimizer.Broadcast, optimizer.Forward}, // the small workset to the edges' partitions
		{optimizer.Hash, optimizer.Hash},         // both hashed, the edges once
		{optimizer.Forward, optimizer.Broadcast}, // the edges broadcast once
	} {
		if !seen[want] {
			t.Errorf("no run shipped the join's inputs %v (ran %v)", want, seen)
		}
	}
}
