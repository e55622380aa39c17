package graph

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestBuildSpilledValues: the spilled build keeps every edge's value for
// value types of every encoding: variable length (strings, some longer
// than 127 bytes, whose length takes two bytes), and none at all
// (struct{}). Against a naive adjacency, under two budgets that spill, in
// all directions.
func TestBuildSpilledValues(t *testing.T) {
	defer func(b int) { blockEdges = b }(blockEdges)
	blockEdges = 256
	const n, m = 500, 4000
	r := rand.New(rand.NewPCG(5, 6))
	vs := identityVertices(n)
	var es []Edge[int64, string]
	for i := range m {
		val := fmt.Sprint(i)
		if i%7 == 0 {
			val = strings.Repeat("v", 100+r.IntN(300)) + val
		}
		es = append(es, Edge[int64, string]{Src: r.Int64N(n), Dst: r.Int64N(n), Value: val})
	}
	for _, dir := range []Direction{Out, In, All} {
		want := map[int64][]spilledEntry[string]{}
		for _, e := range es {
			s, d := e.Src, e.Dst
			if dir == In {
				s, d = d, s
			}
			want[s] = append(want[s], spilledEntry[string]{d, e.Value})
			if dir == All {
				want[d] = append(want[d], spilledEntry[string]{s, e.Value})
			}
		}
		for _, budget := range []int64{48 << 10, 160 << 10} {
			t.Run(fmt.Sprintf("string/%v/%d", dir, budget), func(t *testing.T) {
				got := buildSpilled(t, budget, dir, vs, es)
				if len(got) != len(want) {
					t.Fatalf("%d vertices with entries, want %d", len(got), len(want))
				}
				for k, w := range want {
					if !slices.Equal(got[k], w) {
						t.Fatalf("vertex %d: %v, want %v", k, got[k], w)
					}
				}
			})
			t.Run(fmt.Sprintf("empty/%v/%d", dir, budget), func(t *testing.T) {
				empty := make([]Edge[int64, struct{}], len(es))
				for i, e := range es {
					empty[i] = Edge[int64, struct{}]{Src: e.Src, Dst: e.Dst}
				}
				got := buildSpilled(t, budget/4, dir, vs, empty) // entries of 4 bytes: a smaller budget spills
				if len(got) != len(want) {
					t.Fatalf("%d vertices with entries, want %d", len(got), len(want))
				}
				for k, w := range want {
					ts := make([]spilledEntry[struct{}], len(w))
					for i, e := range w {
						ts[i].to = e.to
					}
					if !slices.Equal(got[k], ts) {
						t.Fatalf("vertex %d: %v, want %v", k, got[k], ts)
					}
				}
			})
		}
	}
}

// spilledEntry is an entry of a vertex: its target's key and the value.
type spilledEntry[EV comparable] struct {
	to  int64
	val EV
}

// buildSpilled builds the adjacency of vs and es (a batch of 64 edges at a
// time) under budget, fails unless it spilled, and returns every vertex's
// entries in order, read back from the chunks.
func buildSpilled[EV comparable](t *testing.T, budget int64, dir Direction, vs []Vertex[int64, int64], es []Edge[int64, EV]) map[int64][]spilledEntry[EV] {
	t.Helper()
	b := testBuilder[int64, EV](t, budget, dir, false, 1)
	b.after = 1 << 50 // the iteration takes all memory after: chunks on disk
	g := feed(t, b, vs, es)
	if g.adj.mem != nil {
		t.Fatal("the adjacency did not spill")
	}
	got := map[int64][]spilledEntry[EV]{}
	for i := range g.adj.chunks() {
		c, err := g.adj.chunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.values) != len(c.tgts()) {
			t.Fatalf("chunk %d: %d values for %d targets", i, len(c.values), len(c.tgts()))
		}
		for v := c.lo; v < c.hi; v++ {
			for j := c.offsets[v-c.lo]; j < c.offsets[v-c.lo+1]; j++ {
				got[g.ids[v]] = append(got[g.ids[v]], spilledEntry[EV]{g.ids[c.tgts()[j]], c.values[j]})
			}
		}
	}
	return got
}

// TestAppendSized: a value's length goes before it in one byte or more.
func TestAppendSized(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 20000} {
		val := strings.Repeat("x", n)
		rec := append([]byte("head"), 0)
		rec = appendSized(append(rec, val...), 4)
		l, k := binary.Uvarint(rec[4:])
		if int(l) != n || string(rec[4+k:]) != val || string(rec[:4]) != "head" {
			t.Fatalf("n=%d: length %d in %d bytes, %d bytes after", n, l, k, len(rec)-4-k)
		}
	}
}
