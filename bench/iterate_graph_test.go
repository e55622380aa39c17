package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
	"github.com/weirdata/weir/iterate"
)

// weir's iteration jobs on the graph package (iterate.PageRankGraph and
// iterate.ConnectedComponentsGraph, scatter-gather iterations) on the hand
// loops' R-MAT graph (see iterate_test.go), at parallelism 2, with unlimited
// memory. Run next to the hand loops and the DataSet formulations:
//
//	go test ./bench -run '^$' -bench 'Hand|Weir(PageRank|Components)|Graph(PageRank|Components)' -benchtime 1x
//	WEIR_ITER_SCALE=20 go test ./bench -run '^$' -bench 'Graph(PageRank|Components)' -benchtime 1x
//
// ms/superstep is the mean time of the supersteps after the first; first-ms
// is the first superstep plus the build of the dense ids and the adjacency
// arrays (build-ms alone), to compare with the DataSet formulations' first
// superstep and with the hand loops' CSR build (see reportGraph).

func BenchmarkGraphPageRank(b *testing.B) {
	g, scale := benchGraph(b)
	pages, edges := weirGraph(g)
	b.Run(fmt.Sprintf("scale%d", scale), func(b *testing.B) {
		var s graph.Stats
		for b.Loop() {
			env := dataset.New(dataset.Options{Parallelism: handWorkers})
			ranks := iterate.PageRankGraph(dataset.FromSlice(env, pages), dataset.FromSlice(env, edges),
				iterate.PageRankParams{Iterations: handIterations, Epsilon: -1}, &s)
			n := dataset.Count(ranks)
			if _, err := env.Execute(context.Background()); err != nil {
				b.Fatal(err)
			}
			if n.N() != int64(g.n) {
				b.Fatalf("%d ranks, want %d", n.N(), g.n)
			}
		}
		reportGraph(b, &s)
	})
}

func BenchmarkGraphComponents(b *testing.B) {
	g, scale := benchGraph(b)
	pages, edges := weirGraph(g)
	b.Run(fmt.Sprintf("scale%d", scale), func(b *testing.B) {
		var s graph.Stats
		for b.Loop() {
			env := dataset.New(dataset.Options{Parallelism: handWorkers})
			cc := iterate.ConnectedComponentsGraph(dataset.FromSlice(env, pages), dataset.FromSlice(env, edges), 1<<20, &s)
			n := dataset.Count(cc)
			if _, err := env.Execute(context.Background()); err != nil {
				b.Fatal(err)
			}
			if n.N() != int64(g.n) {
				b.Fatalf("%d vertices, want %d", n.N(), g.n)
			}
		}
		reportGraph(b, &s)
	})
}

// reportGraph reports the last run's figures as reportSupersteps does, with
// the build of the dense ids and the adjacency counted in first-ms and
// reported alone as build-ms.
func reportGraph(b *testing.B, s *graph.Stats) {
	steps := s.Supersteps
	b.ReportMetric(float64(len(steps)), "supersteps")
	b.ReportMetric(float64(s.Build.Microseconds())/1000, "build-ms")
	if len(steps) == 0 {
		return
	}
	b.ReportMetric(float64((s.Build+steps[0].Time).Microseconds())/1000, "first-ms")
	if len(steps) > 1 {
		var total time.Duration
		for _, x := range steps[1:] {
			total += x.Time
		}
		b.ReportMetric(float64(total.Microseconds())/1000/float64(len(steps)-1), "ms/superstep")
	}
}
