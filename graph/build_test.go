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
func testBuilder[K comparable, EV any](t testing.TB, budget int64, dir Direction, reverse bool) *builder[K, int64, EV] {
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
	return &builder[K, int64, EV]{res: res, space: space, dir: dir, reverse: reverse}
}

type entry struct {
	to  int64
	val float64
}

// adjacencyOf returns every vertex's entries (target keys and values,
// sorted) from the chunks of a.
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
				got[ids[v]] = append(got[ids[v]], entry{ids[c.targets[j]], val})
			}
		}
	}
	for _, es := range got {
		sortEntries(es)
	}
	return got
}

func sortEntries(es []entry) {
	slices.SortFunc(es, func(a, b entry) int {
		if a.to != b.to {
			return int(a.to - b.to)
		}
		switch {
		case a.val < b.val:
			return -1
		case a.val > b.val:
			return 1
		}
		return 0
	})
}

// TestBuildMatchesNaive: the adjacency the builder makes of edges fed a
// batch at a time equals a naive one (edges with an end that is no vertex
// left out, both ways for All, the reverse for pulling by target), in
// memory and under budgets that spill from the first edge, after some
// blocks, or when the blocks fit and the arrays do not.
func TestBuildMatchesNaive(t *testing.T) {
	defer func(b int) { blockEdges = b }(blockEdges)
	blockEdges = 256
	const n, m = 1000, 6000
	r := rand.New(rand.NewPCG(3, 4))
	var vs []Vertex[int64, int64]
	for i := range n {
		vs = append(vs, Vertex[int64, int64]{ID: int64(i) * 3, Value: int64(i)})
	}
	vs = append(vs, vs[5]) // a repeated key
	r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
	var es []Edge[int64, float64]
	for range m {
		// some ends are no vertex: keys not multiples of 3, or past the last
		es = append(es, Edge[int64, float64]{Src: r.Int64N(3*n + 30), Dst: r.Int64N(3*n + 30), Value: float64(r.IntN(100))})
	}
	isVertex := func(k int64) bool { return k%3 == 0 && k < 3*n }
	budgets := []int64{0, 48 << 10, 96 << 10, 160 << 10, 220 << 10}
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
		for _, es := range want {
			sortEntries(es)
		}
		for _, es := range wantRev {
			sortEntries(es)
		}
		for _, budget := range budgets {
			t.Run(fmt.Sprintf("%v/%d", dir, budget), func(t *testing.T) {
				b := testBuilder[int64, float64](t, budget, dir, true)
				for i := 0; i < len(vs); i += 100 {
					b.addVertices(vs[i:min(i+100, len(vs))])
				}
				if err := b.index(); err != nil {
					t.Fatal(err)
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
				case g.adj.mem != nil:
				case blocks > 0:
					spilled["finish"] = true
				case b.evc != nil && g.adj.chunks() > 1:
					spilled["input"] = true
				}
				if g.rev != nil && dir != All {
					rev := adjacencyOf(t, g.ids, &adjacency[float64]{mem: g.rev})
					for k, w := range wantRev {
						if !slices.Equal(rev[k], w) {
							t.Fatalf("reverse of vertex %d: %v, want %v", k, rev[k], w)
						}
					}
				}
			})
		}
	}
	if !spilled["finish"] || !spilled["input"] {
		t.Errorf("spills seen %v: want the budgets to spill while the edges come and after they all fit", spilled)
	}
}

// TestBuildStringKeys: keys that go through the map index.
func TestBuildStringKeys(t *testing.T) {
	b := testBuilder[string, float64](t, 0, Out, false)
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
	b := testBuilder[int64, struct{}](t, 0, All, true)
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
// one block per blockEdges edges only.
func TestAddEdgesAllocs(t *testing.T) {
	b := buildFor(t, 1<<16)
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
		t.Errorf("%v allocations a batch of %d edges, want none per edge", allocs, len(batch))
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
