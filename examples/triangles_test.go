package examples

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// oracleTriangles finds the triangles of edges through adjacency sets: for
// every edge a < b, every common neighbour c > b closes one.
func oracleTriangles(edges []Edge) []string {
	adj := map[int64]map[int64]bool{}
	add := func(a, b int64) {
		if adj[a] == nil {
			adj[a] = map[int64]bool{}
		}
		adj[a][b] = true
	}
	for _, e := range edges {
		if e.A != e.B {
			add(e.A, e.B)
			add(e.B, e.A)
		}
	}
	var tris []Triangle
	for a, ns := range adj {
		for b := range ns {
			if b <= a {
				continue
			}
			for c := range adj[b] {
				if c > b && ns[c] {
					tris = append(tris, Triangle{a, b, c})
				}
			}
		}
	}
	slices.SortFunc(tris, func(x, y Triangle) int {
		return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B), cmp.Compare(x.C, y.C))
	})
	out := make([]string, 0, len(tris))
	for _, t := range tris {
		out = append(out, fmt.Sprintf("%d %d %d", t.A, t.B, t.C))
	}
	return out
}

func TestTrianglesDefaultData(t *testing.T) {
	// Checked by hand on Flink's EnumTrianglesData: 1-2-3, 1-2-5, 1-3-4 and 3-7-8
	// are the cycles of length three.
	want := []string{"1 2 3", "1 2 5", "1 3 4", "3 7 8"}
	checkLines(t, "oracle", oracleTriangles(TriangleEdges), want)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			run := func(ctx context.Context, o Options) error { return RunTriangles(ctx, o, "") }
			checkLines(t, "stdout", runToStdout(t, options(t, c), run), want)
			checkLines(t, "file", runToFile(t, options(t, c), run), want)
		})
	}
}

// zipfGraph returns n edges between zipf-skewed vertices (a few hubs of high
// degree), with duplicates, reversed duplicates and self-loops.
func zipfGraph(seed uint64, n, vertices int) []Edge {
	r := rand.New(rand.NewPCG(seed, 17))
	z := rand.NewZipf(r, 1.1, 1, uint64(vertices-1))
	out := make([]Edge, 0, n)
	for len(out) < n {
		e := Edge{int64(z.Uint64()), int64(r.IntN(vertices))}
		out = append(out, e)
		switch r.IntN(20) {
		case 0:
			out = append(out, e)
		case 1:
			out = append(out, Edge{e.B, e.A})
		case 2:
			out = append(out, Edge{e.A, e.A})
		}
	}
	return out
}

func writeEdges(t *testing.T, edges []Edge) string {
	lines := make([]string, len(edges))
	for i, e := range edges {
		lines[i] = fmt.Sprintf("%d %d", e.A, e.B)
	}
	return writeFile(t, "edges.txt", lines)
}

func TestTrianglesFile(t *testing.T) {
	var clique []Edge // K_12: every triple is a triangle
	for a := range int64(12) {
		for b := a + 1; b < 12; b++ {
			clique = append(clique, Edge{b, a})
		}
	}
	inputs := []struct {
		name  string
		edges []Edge
		want  int // triangles, -1: whatever the oracle finds (but some)
	}{
		{"empty", nil, 0},
		{"zipf", zipfGraph(1, 4000, 300), -1},
		{"all-equal", slices.Repeat([]Edge{{7, 9}}, 2000), 0},
		{"clique", clique, 12 * 11 * 10 / 6},
	}
	for _, in := range inputs {
		path := writeEdges(t, in.edges)
		want := oracleTriangles(in.edges)
		if in.want >= 0 && len(want) != in.want || in.want < 0 && len(want) == 0 {
			t.Fatalf("%s: the oracle finds %d triangles", in.name, len(want))
		}
		for _, c := range configs {
			t.Run(in.name+"/"+c.name, func(t *testing.T) {
				run := func(ctx context.Context, o Options) error { return RunTriangles(ctx, o, path) }
				checkLines(t, "file", runToFile(t, options(t, c), run), want)
			})
		}
	}
}

func TestTrianglesErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.txt")
	for _, tc := range []struct {
		name  string
		lines []string
		path  string
		want  string
	}{
		{name: "missing", path: missing, want: "edges file: stat " + missing},
		{name: "one vertex", lines: []string{"1 2", "3 4", "5"}, want: `edges.txt line 3: "5": want two vertex ids`},
		{name: "not a number", lines: []string{"1 2", "3 x4"}, want: `edges.txt line 2: vertex "x4": not an integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = writeFile(t, "edges.txt", tc.lines)
			}
			for _, c := range []config{{"p1", 1, 0}, {"p3-tiny", 3, 256 << 10}} {
				o := options(t, c)
				dir := t.TempDir()
				o.Output = filepath.Join(dir, "out.txt")
				err := RunTriangles(context.Background(), o, path)
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s: error %v, want one line containing %q", c.name, err, tc.want)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Fatalf("%s: output directory holds %v after an error", c.name, ents)
				}
			}
		})
	}
}

// TestTrianglesFailsLate breaks the last line of a large input, so that the
// run fails while the degree aggregation and the joins hold (and, with a tiny
// budget, spill) data: nothing may be left behind.
func TestTrianglesFailsLate(t *testing.T) {
	edges := zipfGraph(2, 6000, 300)
	lines := make([]string, 0, len(edges)+1)
	for _, e := range edges {
		lines = append(lines, fmt.Sprintf("%d %d", e.A, e.B))
	}
	lines = append(lines, "1 2 3", "4 -") // extra fields are fine; "-" is not a vertex
	path := writeFile(t, "edges.txt", lines)
	for _, c := range configs {
		o := options(t, c)
		dir := t.TempDir()
		o.Output = filepath.Join(dir, "out.txt")
		err := RunTriangles(context.Background(), o, path)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != len(lines) {
			t.Fatalf("%s: error %v, want a ParseError of line %d", c.name, err, len(lines))
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%s: output directory holds %v", c.name, ents)
		}
	}
}

// TestTrianglesCancelled cancels runs after a few delays: each either finishes
// with the right result or fails with context.Canceled, leaving nothing behind.
func TestTrianglesCancelled(t *testing.T) {
	edges := zipfGraph(3, 6000, 300)
	path := writeEdges(t, edges)
	want := oracleTriangles(edges)
	for _, delay := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond} {
		for _, c := range configs {
			o := options(t, c)
			dir := t.TempDir()
			o.Output = filepath.Join(dir, "out.txt")
			ctx, cancel := context.WithCancel(context.Background())
			stop := time.AfterFunc(delay, cancel)
			err := RunTriangles(ctx, o, path)
			stop.Stop()
			cancel()
			if err == nil {
				got, rerr := os.ReadFile(o.Output)
				if rerr != nil {
					t.Fatal(rerr)
				}
				checkLines(t, c.name, splitLines(string(got)), want)
				continue
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s, cancelled after %v: error %v, want context.Canceled", c.name, delay, err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("%s, cancelled after %v: output directory holds %v", c.name, delay, ents)
			}
			t.Logf("%s: cancelled after %v", c.name, delay)
		}
	}
}
