package gen

import (
	"iter"
	"math"
	"slices"
	"testing"
)

func collect(t *testing.T, seq iter.Seq2[int64, int64]) [][2]int64 {
	t.Helper()
	var out [][2]int64
	for s, d := range seq {
		out = append(out, [2]int64{s, d})
	}
	return out
}

func mustGraph(t *testing.T, vertices, edges int64, seed uint64, a, b, c float64) iter.Seq2[int64, int64] {
	t.Helper()
	g, err := Graph(vertices, edges, seed, a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGraphDeterministic(t *testing.T) {
	g := mustGraph(t, 1<<10, 5000, 7, DefaultA, DefaultB, DefaultC)
	first := collect(t, g)
	if len(first) != 5000 {
		t.Fatalf("got %d edges, want 5000", len(first))
	}
	for _, e := range first {
		if e[0] < 0 || e[0] >= 1<<10 || e[1] < 0 || e[1] >= 1<<10 {
			t.Fatalf("edge %v out of [0, 1024)", e)
		}
	}
	if again := collect(t, g); !slices.Equal(first, again) {
		t.Error("a second range over the same iterator gave other edges")
	}
	if same := collect(t, mustGraph(t, 1<<10, 5000, 7, DefaultA, DefaultB, DefaultC)); !slices.Equal(first, same) {
		t.Error("the same seed gave other edges")
	}
	if other := collect(t, mustGraph(t, 1<<10, 5000, 8, DefaultA, DefaultB, DefaultC)); slices.Equal(first, other) {
		t.Error("another seed gave the same edges")
	}
	// breaking off early stops the iterator
	n := 0
	for range g {
		n++
		if n == 10 {
			break
		}
	}
	if n != 10 {
		t.Errorf("break after 10: ranged %d", n)
	}
}

// TestGraphQuadrants checks the R-MAT distribution on the unpermuted matrix
// indices: at every bit level the pair (source bit, destination bit) is
// (0,0), (0,1), (1,0), (1,1) with probabilities a, b, c, d, independently.
func TestGraphQuadrants(t *testing.T) {
	const scale, m = 8, 200000
	a, b, c := 0.5, 0.2, 0.1
	want := [4]float64{a, b, c, 1 - a - b - c}
	g, err := graph(1<<scale, m, 3, a, b, c, false)
	if err != nil {
		t.Fatal(err)
	}
	var counts [scale][4]int
	for s, d := range g {
		for bit := range scale {
			q := (s>>bit&1)<<1 | d>>bit&1
			counts[bit][q]++
		}
	}
	for bit := range scale {
		for q := range 4 {
			got := float64(counts[bit][q]) / m
			sigma := math.Sqrt(want[q] * (1 - want[q]) / m)
			if math.Abs(got-want[q]) > 5*sigma {
				t.Errorf("bit %d quadrant %d: frequency %.4f, want %.4f ± %.4f", bit, q, got, want[q], 5*sigma)
			}
		}
	}
}

func TestGraphDegenerateProbabilities(t *testing.T) {
	// a = 1: every edge is matrix cell (0, 0), so all edges are one self loop.
	edges := collect(t, mustGraph(t, 1<<6, 100, 1, 1, 0, 0))
	for _, e := range edges {
		if e != edges[0] || e[0] != e[1] {
			t.Fatalf("a=1: edge %v, want all equal to one self loop, first %v", e, edges[0])
		}
	}
	// b = 1: every edge is cell (0, 63), one edge that is not a loop.
	edges = collect(t, mustGraph(t, 1<<6, 100, 1, 0, 1, 0))
	for _, e := range edges {
		if e != edges[0] || e[0] == e[1] {
			t.Fatalf("b=1: edge %v, want all equal to one non-loop edge, first %v", e, edges[0])
		}
	}
	// d = 1 (a = b = c = 0): cell (63, 63)
	edges = collect(t, mustGraph(t, 1<<6, 100, 1, 0, 0, 0))
	for _, e := range edges {
		if e != edges[0] || e[0] != e[1] {
			t.Fatalf("d=1: edge %v, want one self loop", e)
		}
	}
	// one vertex: every edge is 0 -> 0
	for _, e := range collect(t, mustGraph(t, 1, 5, 1, DefaultA, DefaultB, DefaultC)) {
		if e != [2]int64{0, 0} {
			t.Fatalf("one vertex: edge %v", e)
		}
	}
}

func TestGraphErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, m    int64
		a, b, c float64
	}{
		{"not a power of two", 1000, 10, DefaultA, DefaultB, DefaultC},
		{"zero vertices", 0, 10, DefaultA, DefaultB, DefaultC},
		{"negative edges", 16, -1, DefaultA, DefaultB, DefaultC},
		{"sum above one", 16, 10, 0.6, 0.3, 0.3},
		{"negative probability", 16, 10, -0.1, 0.5, 0.3},
		{"NaN", 16, 10, math.NaN(), 0.5, 0.3},
	} {
		if _, err := Graph(tc.n, tc.m, 1, tc.a, tc.b, tc.c); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestPermutation checks that the vertex renaming is a bijection of
// [0, 2^scale) that moves ids, for every scale up to 16.
func TestPermutation(t *testing.T) {
	for scale := range 17 {
		p := newPermutation(scale, uint64(scale)*31+5)
		n := uint64(1) << scale
		seen := make([]bool, n)
		fixed := 0
		for x := range n {
			y := p.apply(x)
			if y >= n || seen[y] {
				t.Fatalf("scale %d: %d -> %d repeats or leaves the range", scale, x, y)
			}
			seen[y] = true
			if y == x {
				fixed++
			}
		}
		if scale >= 8 && fixed > int(n/16) {
			t.Errorf("scale %d: %d of %d ids unmoved", scale, fixed, n)
		}
	}
}

// TestGraphSkew checks that the renamed graph is skewed but that the high
// degree vertices are not the low ids: the 1% of vertices of highest
// out-degree hold far more than 1% of the edges, and their mean id is near the
// middle of the range.
func TestGraphSkew(t *testing.T) {
	const n, m = 1 << 12, 1 << 16
	deg := make([]int, n)
	for s := range mustGraph(t, n, m, 11, DefaultA, DefaultB, DefaultC) {
		deg[s]++
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	slices.SortFunc(ids, func(x, y int) int { return deg[y] - deg[x] })
	top, sum := 0, 0
	for _, v := range ids[:n/100] {
		top += deg[v]
		sum += v
	}
	if frac := float64(top) / m; frac < 0.1 {
		t.Errorf("top 1%% of vertices hold %.3f of the edges, want a skewed graph", frac)
	}
	if mean := float64(sum) / float64(n/100); mean < n/4 || mean > 3*n/4 {
		t.Errorf("mean id of the top vertices %.0f: degrees look sorted by id", mean)
	}
}

func TestGrid(t *testing.T) {
	got := collect(t, Grid(3, 2))
	want := [][2]int64{{0, 1}, {0, 3}, {1, 2}, {1, 4}, {2, 5}, {3, 4}, {4, 5}}
	if !slices.Equal(got, want) {
		t.Errorf("Grid(3, 2) = %v, want %v", got, want)
	}
	for _, wh := range [][2]int64{{1, 1}, {1, 5}, {5, 1}, {4, 7}, {0, 3}, {3, -1}} {
		w, h := wh[0], wh[1]
		edges := collect(t, Grid(w, h))
		want := int64(0)
		if w > 0 && h > 0 {
			want = (w-1)*h + w*(h-1)
		}
		if int64(len(edges)) != want {
			t.Errorf("Grid(%d, %d): %d edges, want %d", w, h, len(edges), want)
		}
		for _, e := range edges {
			x0, y0, x1, y1 := e[0]%w, e[0]/w, e[1]%w, e[1]/w
			if e[1] >= w*h || !(x1 == x0+1 && y1 == y0 || x1 == x0 && y1 == y0+1) {
				t.Errorf("Grid(%d, %d): %v joins (%d,%d) and (%d,%d)", w, h, e, x0, y0, x1, y1)
			}
		}
	}
}

func TestVertices(t *testing.T) {
	if got := slices.Collect(Vertices(4)); !slices.Equal(got, []int64{0, 1, 2, 3}) {
		t.Errorf("Vertices(4) = %v", got)
	}
}

func BenchmarkGraph(b *testing.B) {
	g, err := Graph(1<<20, 1<<20, 1, DefaultA, DefaultB, DefaultC)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var x int64
		for s, d := range g {
			x += s ^ d
		}
		_ = x
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(1<<20), "ns/edge")
}
