package bench

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
)

// The hand-written loops below are the practical limit the iteration jobs are
// compared with: single-process Go over compressed adjacency arrays (CSR), no
// serialization, no exchange, no memory budget. Run
//
//	go test ./bench -run '^$' -bench Hand
//	WEIR_ITER_SCALE=20 go test ./bench -run '^$' -bench Hand -benchtime 3x
//
// The graph is R-MAT (internal/gen, Graph500's probabilities, seed 1) with
// 2^scale vertices and 16 edges per vertex, Graph500's edge factor: scale 16
// (65,536 vertices, 1,048,576 edges) by default, WEIR_ITER_SCALE to change it.

const (
	handDamping    = 0.85
	handIterations = 10 // PageRank steps per benchmark op, Flink's example's default
	handWorkers    = 2
)

// csr is a compressed adjacency: the neighbours of v are
// targets[offsets[v]:offsets[v+1]].
type csr struct {
	offsets []int64
	targets []uint32
}

func (c *csr) vertices() int { return len(c.offsets) - 1 }

// buildCSR makes the adjacency of n vertices in which each edge src[i]→dst[i]
// lists dst[i] as a neighbour of src[i] (and, if both, src[i] of dst[i]), by a
// counting sort.
func buildCSR(n int, src, dst []uint32, both bool) csr {
	offsets := make([]int64, n+1)
	for i := range src {
		offsets[src[i]+1]++
		if both {
			offsets[dst[i]+1]++
		}
	}
	for v := range n {
		offsets[v+1] += offsets[v]
	}
	next := make([]int64, n)
	copy(next, offsets[:n])
	targets := make([]uint32, offsets[n])
	for i := range src {
		s, d := src[i], dst[i]
		targets[next[s]] = d
		next[s]++
		if both {
			targets[next[d]] = s
			next[d]++
		}
	}
	return csr{offsets: offsets, targets: targets}
}

// handGraph is a graph as edge arrays and the adjacencies the loops use.
type handGraph struct {
	n        int
	src, dst []uint32
	in       csr // in-neighbours, for PageRank pull
	sym      csr // neighbours in both directions, for components
	outdeg   []uint32
}

func newHandGraph(n int, src, dst []uint32) *handGraph {
	g := &handGraph{n: n, src: src, dst: dst, outdeg: make([]uint32, n)}
	for _, s := range src {
		g.outdeg[s]++
	}
	g.in = buildCSR(n, dst, src, false)
	g.sym = buildCSR(n, src, dst, true)
	return g
}

// rmatGraph generates the R-MAT graph of 2^scale vertices and edges edges.
func rmatGraph(tb testing.TB, scale int, edges int64) *handGraph {
	tb.Helper()
	n := int64(1) << scale
	seq, err := gen.Graph(n, edges, 1, gen.DefaultA, gen.DefaultB, gen.DefaultC)
	if err != nil {
		tb.Fatal(err)
	}
	src, dst := make([]uint32, 0, edges), make([]uint32, 0, edges)
	for s, d := range seq {
		src = append(src, uint32(s))
		dst = append(dst, uint32(d))
	}
	return newHandGraph(int(n), src, dst)
}

var benchGraphs = map[int]*handGraph{}

// benchScale returns the scale of WEIR_ITER_SCALE (default 16).
func benchScale(b *testing.B) int {
	scale := 16
	if s := os.Getenv("WEIR_ITER_SCALE"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 27 {
			b.Fatalf("WEIR_ITER_SCALE=%q is not a scale in [1, 27]", s)
		}
		scale = v
	}
	return scale
}

// benchGraph returns the benchmark graph of WEIR_ITER_SCALE (default 16),
// generating it once per scale.
func benchGraph(b *testing.B) (*handGraph, int) {
	scale := benchScale(b)
	if g := benchGraphs[scale]; g != nil {
		return g, scale
	}
	g := rmatGraph(b, scale, 16<<scale)
	benchGraphs[scale] = g
	return g, scale
}

// pageRank is PageRank by pull over in-neighbours, its vertices split between
// workers in ranges of about equal in-edge counts. One step is one parallel
// pass: each worker computes the new rank of its vertices from the
// contributions rank/outdeg of the last step and, in the same pass, their
// contributions for the next.
type pageRank struct {
	g             *handGraph
	parts         []int // worker w owns vertices [parts[w], parts[w+1])
	rank, next    []float64
	contrib, cnew []float64
}

func newPageRank(g *handGraph, workers int) *pageRank {
	p := &pageRank{g: g, rank: make([]float64, g.n), next: make([]float64, g.n),
		contrib: make([]float64, g.n), cnew: make([]float64, g.n)}
	p.parts = make([]int, workers+1)
	total := g.in.offsets[g.n] + int64(g.n) // edges and vertices both cost
	v := 0
	for w := 1; w < workers; w++ {
		for v < g.n && (g.in.offsets[v]+int64(v))*int64(workers) < total*int64(w) {
			v++
		}
		p.parts[w] = v
	}
	p.parts[workers] = g.n
	p.reset()
	return p
}

// reset sets every rank to 1/n.
func (p *pageRank) reset() {
	for v := range p.rank {
		p.rank[v] = 1 / float64(p.g.n)
		p.contrib[v] = 0
		if d := p.g.outdeg[v]; d > 0 {
			p.contrib[v] = p.rank[v] / float64(d)
		}
	}
}

func (p *pageRank) step() {
	var wg sync.WaitGroup
	for w := range len(p.parts) - 1 {
		wg.Go(func() { p.stepRange(p.parts[w], p.parts[w+1]) })
	}
	wg.Wait()
	p.rank, p.next = p.next, p.rank
	p.contrib, p.cnew = p.cnew, p.contrib
}

func (p *pageRank) stepRange(lo, hi int) {
	base := (1 - handDamping) / float64(p.g.n)
	offs, tgts := p.g.in.offsets, p.g.in.targets
	contrib, next, cnew, outdeg := p.contrib, p.next, p.cnew, p.g.outdeg
	for v := lo; v < hi; v++ {
		s := 0.0
		for _, u := range tgts[offs[v]:offs[v+1]] {
			s += contrib[u]
		}
		r := base + handDamping*s
		next[v] = r
		c := 0.0
		if d := outdeg[v]; d > 0 {
			c = r / float64(d)
		}
		cnew[v] = c
	}
}

// labelPropagation returns every vertex's component, the smallest id in it,
// by rounds of in-place min-label propagation over sym, and the number of
// rounds, the last being the one that changed nothing.
func labelPropagation(g *handGraph, labels []uint32) (rounds int) {
	for v := range labels {
		labels[v] = uint32(v)
	}
	offs, tgts := g.sym.offsets, g.sym.targets
	for changed := true; changed; {
		changed = false
		rounds++
		for v := range labels {
			m := labels[v]
			for _, u := range tgts[offs[v]:offs[v+1]] {
				m = min(m, labels[u])
			}
			if m < labels[v] {
				labels[v] = m
				changed = true
			}
		}
	}
	return rounds
}

// unionFind returns every vertex's component, the smallest id in it, by
// union-find over sym (each edge once: from its larger end), the root of a
// set always being its smallest id, with path halving.
func unionFind(g *handGraph, parent []uint32) {
	for v := range parent {
		parent[v] = uint32(v)
	}
	find := func(v uint32) uint32 {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	offs, tgts := g.sym.offsets, g.sym.targets
	for v := range g.n {
		for _, u := range tgts[offs[v]:offs[v+1]] {
			if u >= uint32(v) {
				continue
			}
			a, b := find(uint32(v)), find(u)
			if a < b {
				parent[b] = a
			} else if b < a {
				parent[a] = b
			}
		}
	}
	for v := range parent {
		parent[v] = find(uint32(v))
	}
}

// TestHandLoopsMatchOracle checks the hand-written loops against
// internal/oracle on small R-MAT graphs (one dense, one so sparse it has many
// components) and a grid.
func TestHandLoopsMatchOracle(t *testing.T) {
	grid := func() *handGraph {
		var src, dst []uint32
		for s, d := range gen.Grid(7, 5) {
			src, dst = append(src, uint32(s)), append(dst, uint32(d))
		}
		return newHandGraph(35, src, dst)
	}
	for _, tc := range []struct {
		name string
		g    *handGraph
	}{
		{"rmat-8-4096", rmatGraph(t, 8, 4096)},
		{"rmat-10-600", rmatGraph(t, 10, 600)},
		{"grid-7x5", grid()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			edges := make([][2]int64, len(g.src))
			for i := range g.src {
				edges[i] = [2]int64{int64(g.src[i]), int64(g.dst[i])}
			}
			pr := newPageRank(g, handWorkers)
			for range handIterations {
				pr.step()
			}
			want := oracle.PageRank(g.n, edges, handDamping, handIterations)
			for v := range want {
				if math.Abs(pr.rank[v]-want[v]) > 1e-12 {
					t.Fatalf("PageRank of %d: %v, oracle %v", v, pr.rank[v], want[v])
				}
			}

			vertices := make([]int64, g.n)
			for v := range vertices {
				vertices[v] = int64(v)
			}
			comps := oracle.Components(vertices, edges)
			distinct := map[int64]bool{}
			for _, c := range comps {
				distinct[c] = true
			}
			labels := make([]uint32, g.n)
			rounds := labelPropagation(g, labels)
			parent := make([]uint32, g.n)
			unionFind(g, parent)
			for v := range g.n {
				if want := comps[int64(v)]; int64(labels[v]) != want || int64(parent[v]) != want {
					t.Fatalf("component of %d: label propagation %d, union-find %d, oracle %d", v, labels[v], parent[v], want)
				}
			}
			t.Logf("%d vertices, %d edges: %d components, label propagation in %d rounds", g.n, len(edges), len(distinct), rounds)
		})
	}
}

// BenchmarkHandPageRank times handIterations PageRank steps per op with
// handWorkers goroutines and reports the time of one step.
func BenchmarkHandPageRank(b *testing.B) {
	g, scale := benchGraph(b)
	b.Run(fmt.Sprintf("scale=%d", scale), func(b *testing.B) {
		pr := newPageRank(g, handWorkers)
		for b.Loop() {
			pr.reset()
			for range handIterations {
				pr.step()
			}
		}
		steps := float64(b.N * handIterations)
		b.ReportMetric(b.Elapsed().Seconds()*1e3/steps, "ms/iter")
		b.ReportMetric(float64(len(g.src))*steps/b.Elapsed().Seconds()/1e6, "Medges/s")
	})
}

// BenchmarkHandComponents times connected components by label propagation
// (reporting its rounds and the time of one) and by union-find, one thread
// each.
func BenchmarkHandComponents(b *testing.B) {
	g, scale := benchGraph(b)
	labels := make([]uint32, g.n)
	b.Run(fmt.Sprintf("labelprop/scale=%d", scale), func(b *testing.B) {
		rounds := 0
		for b.Loop() {
			rounds = labelPropagation(g, labels)
		}
		b.ReportMetric(float64(rounds), "rounds")
		b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*rounds), "ms/round")
	})
	b.Run(fmt.Sprintf("unionfind/scale=%d", scale), func(b *testing.B) {
		for b.Loop() {
			unionFind(g, labels)
		}
	})
}
