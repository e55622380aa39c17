package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/iterate"
)

// weir's iteration jobs on the hand loops' R-MAT graph (see iterate_test.go),
// at parallelism 2, with unlimited memory. Run next to the hand loops:
//
//	go test ./bench -run '^$' -bench 'Hand|Weir(PageRank|Components)' -benchtime 1x
//	WEIR_ITER_SCALE=20 go test ./bench -run '^$' -bench 'Weir(PageRank|Components)' -benchtime 1x
//
// ms/superstep is the mean time of the supersteps after the first; first-ms
// is the first superstep, which also builds the loop-invariant side (see
// reportSupersteps). Reading the graph into the job is in ns/op only.

func weirGraph(g *handGraph) ([]int64, []iterate.Edge) {
	pages := make([]int64, g.n)
	for i := range pages {
		pages[i] = int64(i)
	}
	edges := make([]iterate.Edge, len(g.src))
	for i := range edges {
		edges[i] = iterate.Edge{Src: int64(g.src[i]), Dst: int64(g.dst[i])}
	}
	return pages, edges
}

func BenchmarkWeirPageRank(b *testing.B) {
	g, scale := benchGraph(b)
	pages, edges := weirGraph(g)
	b.Run(fmt.Sprintf("scale%d", scale), func(b *testing.B) {
		var steps []dataset.SuperstepStats
		for b.Loop() {
			env := dataset.New(dataset.Options{Parallelism: handWorkers})
			ranks := iterate.PageRank(dataset.FromSlice(env, pages), dataset.FromSlice(env, edges),
				iterate.PageRankParams{Iterations: handIterations, Epsilon: -1})
			n := dataset.Count(ranks)
			r, err := env.Execute(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if n.N() != int64(g.n) {
				b.Fatalf("%d ranks, want %d", n.N(), g.n)
			}
			steps = r.Iterations[0].Supersteps
		}
		reportSupersteps(b, steps)
	})
}

func BenchmarkWeirComponents(b *testing.B) {
	g, scale := benchGraph(b)
	pages, edges := weirGraph(g)
	b.Run(fmt.Sprintf("scale%d", scale), func(b *testing.B) {
		var steps []dataset.SuperstepStats
		for b.Loop() {
			env := dataset.New(dataset.Options{Parallelism: handWorkers})
			cc := iterate.ConnectedComponents(dataset.FromSlice(env, pages), dataset.FromSlice(env, edges), 1<<20)
			n := dataset.Count(cc)
			r, err := env.Execute(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if n.N() != int64(g.n) {
				b.Fatalf("%d vertices, want %d", n.N(), g.n)
			}
			steps = r.Iterations[0].Supersteps
		}
		reportSupersteps(b, steps)
	})
}

// reportSupersteps reports the last run's supersteps: ms/superstep, the mean
// time of the supersteps after the first, to compare with one iteration of
// the hand loops; first-ms, the first superstep, which also reads the
// loop-invariant inputs and builds them (the adjacency lists, the edges'
// index), to compare with building the CSR arrays.
func reportSupersteps(b *testing.B, steps []dataset.SuperstepStats) {
	b.ReportMetric(float64(len(steps)), "supersteps")
	if len(steps) == 0 {
		return
	}
	b.ReportMetric(float64(steps[0].Time.Microseconds())/1000, "first-ms")
	if len(steps) > 1 {
		var total time.Duration
		for _, s := range steps[1:] {
			total += s.Time
		}
		b.ReportMetric(float64(total.Microseconds())/1000/float64(len(steps)-1), "ms/superstep")
	}
}
