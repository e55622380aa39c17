package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/gen"
)

// Connected components on a grid converges slowly (one superstep per step of
// the grid's diameter: about 2w for a w×w grid), which is where a delta
// iteration, touching only the vertices whose component changed, should beat
// the same label propagation as a bulk iteration, which touches every vertex
// and edge every superstep. Run
//
//	go test ./bench -run '^$' -bench GridComponents -benchtime 1x
//	WEIR_GRID=300 go test ./bench -run '^$' -bench GridComponents -benchtime 1x
//
// Each op runs the whole iteration; ms/superstep is the per-superstep cost and
// records/superstep what the loop's tail received on average (the workset for
// the delta iteration, every vertex for the bulk one).
//
// Two numberings of the same grid: "rowmajor" numbers the vertices row by row,
// so every vertex's label falls by a row at each superstep until the least
// label reaches it: nearly every vertex changes nearly every superstep, the
// worst case for a delta iteration. "shuffled" numbers them by a random
// permutation (seed 1) with the least id kept at a corner, so the loop still
// runs 2w-2 supersteps, but a vertex's label changes only when a smaller one
// arrives, as in graphs whose ids carry no order.

type vc struct{ V, C int64 }

type edge struct{ Src, Dst int64 }

func gridSize() int {
	if s := os.Getenv("WEIR_GRID"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 1 {
			return n
		}
	}
	return 100
}

// gridGraph returns the vertices and both directions of every edge of a w×w
// grid, numbered row by row or, when shuffled, by a random permutation that
// keeps id 0 at the corner (0, 0).
func gridGraph(w int, shuffled bool) ([]int64, []edge) {
	id := make([]int64, w*w)
	for v := range id {
		id[v] = int64(v)
	}
	if shuffled {
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(id), func(i, j int) { id[i], id[j] = id[j], id[i] })
		z := slices.Index(id, 0)
		id[0], id[z] = id[z], id[0]
	}
	vs := slices.Clone(id)
	var es []edge
	for s, d := range gen.Grid(int64(w), int64(w)) {
		es = append(es, edge{id[s], id[d]}, edge{id[d], id[s]})
	}
	return vs, es
}

func byV(x vc) int64           { return x.V }
func bySrc(e edge) int64       { return e.Src }
func minC(a, b vc) vc          { return vc{a.V, min(a.C, b.C)} }
func label(v int64) vc         { return vc{v, v} }
func spread(x *vc, e *edge) vc { return vc{e.Dst, x.C} }

// deltaComponents is Flink's ConnectedComponents: the workset holds the
// vertices whose component shrank.
func deltaComponents(env *dataset.Env, vs []int64, es []edge) *dataset.DataSet[vc] {
	labels := dataset.Map(dataset.FromSlice(env, vs), label)
	edges := dataset.FromSlice(env, es)
	return dataset.IterateDelta(labels, labels, byV, 1<<20,
		func(it *dataset.DeltaIteration[vc, int64], ws *dataset.DataSet[vc]) (*dataset.DataSet[vc], *dataset.DataSet[vc]) {
			cands := dataset.Join(ws, edges, byV, bySrc, spread)
			mins := dataset.GroupBy(cands, byV).Reduce(minC)
			delta := dataset.JoinSolution(mins, it, byV, func(w, sol *vc, emit func(vc)) {
				if sol != nil && w.C < sol.C {
					emit(*w)
				}
			})
			return delta, delta
		})
}

// bulkComponents is the same label propagation as a bulk iteration: every
// vertex takes the least label among its own and its neighbours', until no
// label changes.
func bulkComponents(env *dataset.Env, vs []int64, es []edge) *dataset.DataSet[vc] {
	labels := dataset.Map(dataset.FromSlice(env, vs), label)
	edges := dataset.FromSlice(env, es)
	return dataset.Iterate(labels, 1<<20, func(it *dataset.Iteration, cur *dataset.DataSet[vc]) *dataset.DataSet[vc] {
		cands := dataset.Join(cur, edges, byV, bySrc, spread)
		next := dataset.GroupBy(dataset.Union(cur, cands), byV).Reduce(minC)
		changed := dataset.Join(next, cur, byV, byV, func(a, b *vc) vc { return vc{a.V, a.C - b.C} })
		dataset.TerminateWhenEmpty(it, changed.Filter(func(x vc) bool { return x.C != 0 }))
		return next
	})
}

func BenchmarkGridComponents(b *testing.B) {
	w := gridSize()
	for _, ids := range []string{"rowmajor", "shuffled"} {
		vs, es := gridGraph(w, ids == "shuffled")
		for _, mode := range []string{"delta", "bulk"} {
			b.Run(fmt.Sprintf("%s/%s/%dx%d", ids, mode, w, w), func(b *testing.B) {
				gridRun(b, mode, vs, es)
			})
		}
	}
}

func gridRun(b *testing.B, mode string, vs []int64, es []edge) {
	var steps int
	var records int64
	var total, fastest time.Duration
	for b.Loop() {
		env := dataset.New(dataset.Options{Parallelism: 2})
		var res *dataset.DataSet[vc]
		if mode == "delta" {
			res = deltaComponents(env, vs, es)
		} else {
			res = bulkComponents(env, vs, es)
		}
		got := dataset.Collect(res)
		start := time.Now()
		r, err := env.Execute(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		steps = len(r.Iterations[0].Supersteps)
		records = 0
		for _, st := range r.Iterations[0].Supersteps {
			records += st.Records
			if fastest == 0 || st.Time < fastest {
				fastest = st.Time
			}
		}
		for _, x := range got.Values() {
			if x.C != 0 {
				b.Fatalf("vertex %d in component %d, want 0", x.V, x.C)
			}
		}
	}
	b.ReportMetric(float64(steps), "supersteps")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N)/float64(steps), "ms/superstep")
	// the cheapest superstep (a delta iteration's last ones carry a few
	// records) is the iteration's fixed cost per superstep
	b.ReportMetric(float64(fastest.Microseconds())/1000, "min-ms/superstep")
	b.ReportMetric(float64(records)/float64(steps), "records/superstep")
}
