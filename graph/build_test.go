package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// testBuilder returns a builder of direction dir on a manager of budget
// bytes (0: unlimited) spilling to a temporary directory.
func testBuilder[K comparable, EV any](t testing.TB, budget int64, dir Direction, reverse bool, workers int) *builder[K, int64, EV] {
	t.Helper()
	m, err := memory.NewManager(memory.Options{SegmentSize: 4096, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := spill.NewDiskFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res := m.NewReservation("test")
	space := spill.NewSpace(fs, "graph", spill.Options{})
	t.Cleanup(func() {
		if err := res.Release(); err != nil {
			t.Error(err)
		}
		if err := space.Close(); err != nil {
			t.Error(err)
		}
		_ = fs.Close()
	})
	return &builder[K, int64, EV]{res: res, space: space, dir: dir, reverse: reverse, workers: workers}
}

type entry struct {
	to  int64
	val float64
}

// adjacencyOf returns every vertex's entries (target keys and values, in
// the adjacency's order) from the chunks of a.
func adjacencyOf(t *testing.T, ids []int64, a *adjacency[float64]) map[int64][]entry {
	t.Helper()
	got := map[int64][]entry{}
	for i := range a.chunks() {
		c, err := a.chunk(i)
		if err != nil {
			t.Fatal(err)
		}
		for v := c.lo; v < c.hi; v++ {
			for j := c.offsets[v-c.lo]; j < c.offsets[v-c.lo+1]; j++ {
				var val float64
				if c.values != nil {
					val = c.values[j]
				}
				got[ids[v]] = append(got[ids[v]], entry{ids[c.tgts()[j]], val})
			}
		}
	}
	return got
}

// TestBuildMatchesNaive: the adjacency the builder makes of edges fed a
// batch at a time equals a naive one, every vertex's entries in the order
// of the edges (edges with an end that is no vertex left out, both ways for
// All, the reverse for pulling by target), for keys of one range (ids by
// key) and keys with gaps (ids by a table), placed by one worker and by
// several, in memory and under budgets that spill from the first edge,
// after some blocks, or when the blocks fit and the arrays do not, and
// spilled edges placed back in memory when the adjacency alone fits.
func TestBuildMatchesNaive(t *testing.T) {
	defer func(b int) { blockEdges = b }(blockEdges)
	blockEdges = 256
	const n, m = 1000, 6000
	for _, keys := range []string{"gaps", "range"} {
		step, first := int64(3), int64(0)
		if keys == "range" {
			step, first = 1, 7
		}
		r := rand.New(rand.NewPCG(3, 4))
		var vs []Vertex[int64, int64]
		for i := range n {
			vs = append(vs, Vertex[int64, int64]{ID: first + int64(i)*step, Value: int64(i)})
		}
		r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		vs = append(vs, Vertex[int64, int64]{ID: vs[5].ID, Value: -1}) // a repeated key: the first value stays
		var es []Edge[int64, float64]
		for range m {
			// some ends are no vertex: off the step, before the first or past the last
			es = append(es, Edge[int64, float64]{Src: r.Int64N(step*n+30) - 5, Dst: r.Int64N(step*n+30) - 5, Value: float64(r.IntN(100))})
		}
		isVertex := func(k int64) bool { return k >= first && (k-first)%step == 0 && k < first+step*n }
		budgets := []int64{0, 48 << 10, 96 << 10, 100 << 10, 108 << 10, 160 << 10, 220 << 10}
		spilled := map[string]bool{}
		for _, dir := range []Direction{Out, In, All} {
			want, wantRev := map[int64][]entry{}, map[int64][]entry{}
			for _, e := range es {
				if !isVertex(e.Src) || !isVertex(e.Dst) {
					continue
				}
				s, d := e.Src, e.Dst
				if dir == In {
					s, d = d, s
				}
				want[s] = append(want[s], entry{d, e.Value})
				wantRev[d] = append(wantRev[d], entry{s, 0})
				if dir == All {
					want[d] = append(want[d], entry{s, e.Value})
				}
			}
			for _, budget := range budgets {
				for _, workers := range []int{1, 3} {
					t.Run(fmt.Sprintf("%s/%v/%d/workers=%d", keys, dir, budget, workers), func(t *testing.T) {
						b := testBuilder[int64, float64](t, budget, dir, true, workers)
						for i := 0; i < len(vs); i += 100 {
							b.addVertices(vs[i:min(i+100, len(vs))])
						}
						if err := b.index(); err != nil {
							t.Fatal(err)
						}
						if got := b.x.dense; got != (keys == "range") {
							t.Errorf("ids by key: %v", got)
						}
						for i := 0; i < len(es); i += 64 {
							if err := b.addEdges(es[i:min(i+64, len(es))]); err != nil {
								t.Fatal(err)
							}
						}
						blocks := len(b.pairs)
						g, err := b.finish()
						if err != nil {
							t.Fatal(err)
						}
						if len(g.ids) != n {
							t.Fatalf("%d vertices, want %d", len(g.ids), n)
						}
						for v, k := range g.ids {
							if !isVertex(k) || g.values[v] != (k-first)/step {
								t.Fatalf("vertex %d: key %d, value %d", v, k, g.values[v])
							}
							if id := g.index.lookup(k); id != uint32(v) {
								t.Fatalf("key %d: id %d, want %d", k, id, v)
							}
						}
						for _, k := range []int64{first - 1, first + step*n, first + 1} {
							if id := g.index.lookup(k); !isVertex(k) && id != absent {
								t.Errorf("key %d is no vertex: id %d", k, id)
							}
						}
						got := adjacencyOf(t, g.ids, g.adj)
						if len(got) != len(want) {
							t.Errorf("%d vertices with entries, want %d", len(got), len(want))
						}
						for k, w := range want {
							if !slices.Equal(got[k], w) {
								t.Fatalf("vertex %d: %v, want %v", k, got[k], w)
							}
						}
						if budget == 0 && g.adj.mem == nil {
							t.Error("spilled with no budget")
						}
						switch {
						case b.held:
							spilled["held"] = true
						case g.adj.mem != nil:
						case blocks > 0:
							spilled["finish"] = true
						case b.evc != nil && g.adj.chunks() > 1:
							spilled["input"] = true
						}
						if budget == 0 && g.rev == nil {
							t.Error("no reverse adjacency with no budget")
						}
						if g.rev != nil && dir != All {
							checkReverse(t, g.ids, g.rev, wantRev)
						}
					})
				}
			}
		}
		if !spilled["finish"] || !spilled["input"] || !spilled["held"] {
			t.Errorf("%s: spills seen %v: want the budgets to spill while the edges come and after they all fit, and spilled edges held in memory", keys, spilled)
		}
	}
}

// TestBuildStringKeys: keys that go through the map index.
func TestBuildStringKeys(t *testing.T) {
	b := testBuilder[string, float64](t, 0, Out, false, 1)
	b.addVertices([]Vertex[string, int64]{{"a", 0}, {"b", 0}, {"c", 0}})
	if err := b.index(); err != nil {
		t.Fatal(err)
	}
	if err := b.addEdges([]Edge[string, float64]{{"a", "b", 1}, {"c", "a", 2}, {"a", "x", 3}, {"a", "c", 4}}); err != nil {
		t.Fatal(err)
	}
	g, err := b.finish()
	if err != nil {
		t.Fatal(err)
	}
	c := g.adj.mem
	if want := []int64{0, 2, 2, 3}; !slices.Equal(c.offsets, want) {
		t.Fatalf("offsets %v, want %v", c.offsets, want)
	}
	if want := []uint32{1, 2, 0}; !slices.Equal(c.targets, want) {
		t.Fatalf("targets %v, want %v", c.targets, want)
	}
	if want := []float64{1, 4, 2}; !slices.Equal(c.values, want) {
		t.Fatalf("values %v, want %v", c.values, want)
	}
}

// edgeBatch returns a batch of edges between the vertices 0..n-1.
func edgeBatch(n, size int) []Edge[int64, struct{}] {
	r := rand.New(rand.NewPCG(1, 2))
	es := make([]Edge[int64, struct{}], size)
	for i := range es {
		es[i] = Edge[int64, struct{}]{Src: r.Int64N(int64(n)), Dst: r.Int64N(int64(n))}
	}
	return es
}

func buildFor(t testing.TB, n int) *builder[int64, int64, struct{}] {
	return buildDir(t, n, All)
}

// buildDir is a builder in direction dir with vertices 0..n-1 indexed.
func buildDir(t testing.TB, n int, dir Direction) *builder[int64, int64, struct{}] {
	b := testBuilder[int64, struct{}](t, 0, dir, true, 2)
	vs := make([]Vertex[int64, int64], n)
	for i := range vs {
		vs[i] = Vertex[int64, int64]{ID: int64(i)}
	}
	b.addVertices(vs)
	if err := b.index(); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAddEdgesAllocs: taking a batch of edges allocates nothing per edge:
// one block per blockEdges edges only, for keys that are their own ids and
// for keys translated through the table.
func TestAddEdgesAllocs(t *testing.T) {
	for _, step := range []int64{1, 2} {
		b := testBuilder[int64, struct{}](t, 0, All, true, 2)
		vs := make([]Vertex[int64, int64], 1<<16)
		for i := range vs {
			vs[i] = Vertex[int64, int64]{ID: int64(i) * step}
		}
		b.addVertices(vs)
		if err := b.index(); err != nil {
			t.Fatal(err)
		}
		if b.x.dense != (step == 1) {
			t.Fatalf("step %d: ids by key %v", step, b.x.dense)
		}
		batch := edgeBatch(1<<16, 1024)
		if err := b.addEdges(batch); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(200, func() {
			if err := b.addEdges(batch); err != nil {
				t.Fatal(err)
			}
		})
		// 200 batches of 1024 edges fill a few blocks of 65536: under one
		// allocation a batch
		if allocs != 0 {
			t.Errorf("step %d: %v allocations a batch of %d edges, want none per edge", step, allocs, len(batch))
		}
	}
}

// BenchmarkAddEdges: the build's loop over arriving edges (translate,
// count, keep), a batch of 1024 at a time; run with -benchmem.
func BenchmarkAddEdges(b *testing.B) {
	const n = 1 << 20
	batch := edgeBatch(n, 1024)
	bl := buildFor(b, n)
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)) * 16)
	for i := 0; b.Loop(); i++ {
		if i%(1<<10) == 0 { // a fresh builder every 2^20 edges
			b.StopTimer()
			bl = buildFor(b, n)
			b.StartTimer()
		}
		if err := bl.addEdges(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild: the whole build of 2^20 vertices (keys 0..n-1) and 2^22
// edges (uniform ends) as PageRank asks for it (Out, with the reverse),
// batches of 1024, by 1 and 2 workers, beside a counting sort of the same
// edges by source and by target on one goroutine (csr), as a hand-written
// loop builds its arrays.
func BenchmarkBuild(b *testing.B) {
	const n, m, size = 1 << 20, 1 << 22, 1024
	es := edgeBatch(n, m)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				bl := testBuilder[int64, struct{}](b, 0, Out, true, workers)
				vs := make([]Vertex[int64, int64], n)
				for i := range vs {
					vs[i] = Vertex[int64, int64]{ID: int64(i)}
				}
				bl.addVertices(vs)
				b.StartTimer()
				if err := bl.index(); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < m; i += size {
					if err := bl.addEdges(es[i : i+size]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := bl.finish(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/build")
		})
	}
	b.Run("csr", func(b *testing.B) {
		src, dst := make([]uint32, m), make([]uint32, m)
		for i, e := range es {
			src[i], dst[i] = uint32(e.Src), uint32(e.Dst)
		}
		for b.Loop() {
			for _, by := range [][2][]uint32{{src, dst}, {dst, src}} {
				offsets := make([]int64, n+1)
				for _, s := range by[0] {
					offsets[s+1]++
				}
				for v := range n {
					offsets[v+1] += offsets[v]
				}
				next := make([]int64, n)
				copy(next, offsets[:n])
				targets := make([]uint32, m)
				for i, s := range by[0] {
					targets[next[s]] = by[1][i]
					next[s]++
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/build")
	})
}

// TestBuildLazyTargets: with edges without values and the reverse
// adjacency, the forward targets are left out of the build and placed from
// the reverse when first asked for, every vertex's neighbours in the order
// of their ids, equal to a naive adjacency.
func TestBuildLazyTargets(t *testing.T) {
	const n, m = 500, 4000
	es := edgeBatch(n, m)
	for _, dir := range []Direction{Out, In} {
		b := buildDir(t, n, dir)
		for i := 0; i < m; i += 100 {
			if err := b.addEdges(es[i : i+100]); err != nil {
				t.Fatal(err)
			}
		}
		g, err := b.finish()
		if err != nil {
			t.Fatal(err)
		}
		c := g.adj.mem
		if c == nil || g.rev == nil || c.targets != nil || c.lazy == nil {
			t.Fatalf("%v: the forward targets were placed by the build", dir)
		}
		want := make([][]uint32, n)
		for _, e := range es {
			s, d := uint32(e.Src), uint32(e.Dst)
			if dir == In {
				s, d = d, s
			}
			want[s] = append(want[s], d)
		}
		targets := c.tgts()
		for v := range n {
			slices.Sort(want[v])
			if got := targets[c.offsets[v]:c.offsets[v+1]]; !slices.Equal(got, want[v]) {
				t.Fatalf("%v: vertex %d: %v, want %v", dir, v, got, want[v])
			}
		}
	}
}

// TestBuildReverseBuckets: the reverse adjacency placed by buckets of
// targets equals the one placed entry by entry, each target's entries in
// the order of the edges, by one worker and by three; under a budget that
// grants the arrays but not the buckets' copy, the entries are placed one
// by one and equal too.
func TestBuildReverseBuckets(t *testing.T) {
	defer func(b, m int64, s int) { blockEdges, minBucketed, bucketShift = int(b), m, s }(int64(blockEdges), minBucketed, bucketShift)
	blockEdges = 256
	const n, m = 1000, 20000
	r := rand.New(rand.NewPCG(5, 6))
	vs := identityVertices(n)
	var es []Edge[int64, float64]
	for range m {
		es = append(es, Edge[int64, float64]{Src: r.Int64N(n), Dst: r.Int64N(n / 2)}) // skewed: half the vertices get none
	}
	want := map[int64][]entry{}
	for _, e := range es {
		want[e.Dst] = append(want[e.Dst], entry{e.Src, 0})
	}
	build := func(budget int64, workers int) (*chunk[float64], bool) {
		b := testBuilder[int64, float64](t, budget, Out, true, workers)
		g := feed(t, b, vs, es)
		if g.rev == nil {
			return nil, false // not granted
		}
		checkReverse(t, g.ids, g.rev, want)
		return g.rev, b.bucketed
	}
	for _, workers := range []int{1, 3} {
		minBucketed = 1 << 62
		direct, _ := build(0, workers)
		minBucketed, bucketShift = 0, 4 // buckets of 16 vertices
		bucketed, used := build(0, workers)
		if !used {
			t.Fatalf("workers=%d: the reverse was not placed by buckets", workers)
		}
		if !slices.Equal(direct.targets, bucketed.targets) || !slices.Equal(direct.offsets, bucketed.offsets) {
			t.Fatalf("workers=%d: the reverse placed by buckets differs from the one placed entry by entry", workers)
		}
		// budgets from those that grant no reverse, through one that grants
		// the reverse and not the buckets' 8 bytes an entry, to both
		seen := map[string]bool{}
		for budget := int64(256 << 10); budget <= 1<<20; budget += 16 << 10 {
			switch rev, used := build(budget, workers); {
			case rev == nil:
				seen["none"] = true
			case used:
				seen["buckets"] = true
			default:
				seen["direct"] = true
			}
		}
		if len(seen) != 3 {
			t.Fatalf("workers=%d: the budgets made %v, want no reverse, one placed directly and one by buckets", workers, seen)
		}
	}
}

// identityVertices returns vertices 0..n-1, each valued with its own ID.
func identityVertices(n int) []Vertex[int64, int64] {
	vs := make([]Vertex[int64, int64], n)
	for i := range vs {
		vs[i] = Vertex[int64, int64]{ID: int64(i), Value: int64(i)}
	}
	return vs
}

// checkReverse checks the reverse adjacency rev of a build against want,
// each target's entries in order.
func checkReverse(t *testing.T, ids []int64, rev *chunk[float64], want map[int64][]entry) {
	t.Helper()
	got := adjacencyOf(t, ids, &adjacency[float64]{mem: rev})
	if len(got) != len(want) {
		t.Fatalf("%d vertices with reverse entries, want %d", len(got), len(want))
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Fatalf("reverse of vertex %d: %v, want %v", k, got[k], w)
		}
	}
}

// feed adds vs to b, indexes them, adds es 64 at a time and finishes b.
func feed[EV any](t *testing.T, b *builder[int64, int64, EV], vs []Vertex[int64, int64], es []Edge[int64, EV]) *graphData[int64, int64, EV] {
	t.Helper()
	b.addVertices(vs)
	if err := b.index(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(es); i += 64 {
		if err := b.addEdges(es[i:min(i+64, len(es))]); err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.finish()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
