package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/graph"
	"github.com/weirdata/weir/internal/gen"
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

// The whole PageRank job from Parquet against the hand loop's whole job:
//
//	go test -c -o bench.test ./bench
//	WEIR_ITER_SCALE=20 ./bench.test -test.run '^$' -test.bench 'PageRankJob' -test.benchtime 1x
//
// BenchmarkGraphPageRankJob runs iterate.RunPageRank, what weir run
// pagerank runs, at parallelism 2 with unlimited memory, 10 supersteps
// (epsilon -1), on the benchmark's R-MAT graph as weir gen graph --format
// parquet writes it: an op reads the Parquet files, builds the adjacency,
// iterates and writes the ranks, sorted, to a Parquet file. The files are
// written once per scale into the temporary directory (weir-bench-graph-S)
// when absent, outside the timing. BenchmarkHandPageRankJob is the hand
// loop's whole job on the same graph: the out-degrees and the CSR of the
// in-neighbours built from the edge arrays (csr-ms), then 10 iterations
// (iter-ms). Their ns/op are the figures to compare.

// parquetGraph returns the paths of the benchmark graph's vertex and edge
// files at scale, writing them when absent.
func parquetGraph(b *testing.B, scale int) (string, string) {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("weir-bench-graph-%d", scale))
	vs, es := filepath.Join(dir, "vertices.parquet"), filepath.Join(dir, "edges.parquet")
	if _, err := os.Stat(es); err == nil {
		return vs, es
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	n := int64(1) << scale
	edges, err := gen.Graph(n, 16*n, 1, gen.DefaultA, gen.DefaultB, gen.DefaultC)
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.WriteVertices(vs, gen.Parquet, gen.Vertices(n)); err != nil {
		b.Fatal(err)
	}
	// the edges last: their file's presence says both are complete
	if err := gen.WriteEdges(es, gen.Parquet, edges); err != nil {
		b.Fatal(err)
	}
	return vs, es
}

func BenchmarkGraphPageRankJob(b *testing.B) {
	scale := benchScale(b)
	vs, es := parquetGraph(b, scale)
	b.Run(fmt.Sprintf("scale%d", scale), func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "ranks.parquet")
		var steps []dataset.SuperstepStats
		for b.Loop() {
			o := iterate.Options{Dataset: dataset.Options{Parallelism: handWorkers}, Output: out, Stdout: io.Discard,
				Executed: func(r *dataset.Result) { steps = r.Iterations[0].Supersteps }}
			err := iterate.RunPageRank(context.Background(), o, iterate.PageRankInputs{Pages: vs, Links: es},
				iterate.PageRankParams{Iterations: handIterations, Epsilon: -1})
			if err != nil {
				b.Fatal(err)
			}
			if len(steps) != handIterations {
				b.Fatalf("%d supersteps, want %d", len(steps), handIterations)
			}
		}
		var total time.Duration
		for _, s := range steps {
			total += s.Time
		}
		b.ReportMetric(float64(total.Microseconds())/1000, "iter-ms")
	})
}

func BenchmarkHandPageRankJob(b *testing.B) {
	g, scale := benchGraph(b)
	b.Run(fmt.Sprintf("scale=%d", scale), func(b *testing.B) {
		var build, iters time.Duration
		for b.Loop() {
			start := time.Now()
			h := &handGraph{n: g.n, src: g.src, dst: g.dst, outdeg: make([]uint32, g.n)}
			for _, s := range g.src {
				h.outdeg[s]++
			}
			h.in = buildCSR(g.n, g.dst, g.src, false)
			mid := time.Now()
			pr := newPageRank(h, handWorkers)
			for range handIterations {
				pr.step()
			}
			build, iters = build+mid.Sub(start), iters+time.Since(mid)
		}
		b.ReportMetric(float64(build.Microseconds())/1000/float64(b.N), "csr-ms")
		b.ReportMetric(float64(iters.Microseconds())/1000/float64(b.N), "iter-ms")
	})
}
