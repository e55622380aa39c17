package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/internal/gen"
)

// readFields reads a text file as lines of space-separated fields.
func readFields(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line != "" {
			out = append(out, strings.Split(line, " "))
		}
	}
	return out
}

func parseInts(t *testing.T, rows [][]string) [][]int64 {
	t.Helper()
	out := make([][]int64, len(rows))
	for i, r := range rows {
		for _, f := range r {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			out[i] = append(out[i], v)
		}
	}
	return out
}

func parseFloats(t *testing.T, fields []string) []float64 {
	t.Helper()
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if code, _, stderr := runWeir(context.Background(), args...); code != 0 {
		t.Fatalf("weir %v: exit %d, stderr %q", args, code, stderr)
	}
}

func TestGenGraphText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g") // created by the command
	mustRun(t, "gen", "graph", "--vertices", "64", "--edges", "500", "--seed", "3", "--out", dir)
	edges := parseInts(t, readFields(t, filepath.Join(dir, "edges.txt")))
	want, err := gen.Graph(64, 500, 3, gen.DefaultA, gen.DefaultB, gen.DefaultC)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for s, d := range want {
		if i >= len(edges) || !slices.Equal(edges[i], []int64{s, d}) {
			t.Fatalf("edge %d: file has %v, want %d %d", i, edges[min(i, len(edges)-1)], s, d)
		}
		i++
	}
	if i != len(edges) || i != 500 {
		t.Fatalf("file has %d edges, want 500", len(edges))
	}
	vertices := parseInts(t, readFields(t, filepath.Join(dir, "vertices.txt")))
	if len(vertices) != 64 || vertices[0][0] != 0 || vertices[63][0] != 63 {
		t.Errorf("vertices.txt: %d lines", len(vertices))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("directory holds %v, want the two files", ents)
	}
}

func TestGenGraphGrid(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "gen", "graph", "--grid", "3x2", "--out", dir)
	got := parseInts(t, readFields(t, filepath.Join(dir, "edges.txt")))
	want := [][]int64{{0, 1}, {0, 3}, {1, 2}, {1, 4}, {2, 5}, {3, 4}, {4, 5}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("3x2 grid edges %v, want %v", got, want)
	}
	if v := readFields(t, filepath.Join(dir, "vertices.txt")); len(v) != 6 {
		t.Errorf("3x2 grid: %d vertices", len(v))
	}
}

// TestGenGraphParquet checks that the Parquet files, read with weir's own
// source, hold what the text files of the same seed hold.
func TestGenGraphParquet(t *testing.T) {
	txt, pq := t.TempDir(), t.TempDir()
	args := []string{"gen", "graph", "--vertices", "128", "--edges", "2000", "--seed", "9"}
	mustRun(t, append(args, "--out", txt)...)
	mustRun(t, append(args, "--out", pq, "--format", "parquet")...)
	want := parseInts(t, readFields(t, filepath.Join(txt, "edges.txt")))
	type edge struct{ Src, Dst int64 }
	type vertex struct{ ID int64 }
	edges := readAll[edge](t, filepath.Join(pq, "edges.parquet"))
	if len(edges) != len(want) {
		t.Fatalf("%d edges in Parquet, %d in text", len(edges), len(want))
	}
	for i, e := range edges {
		if e.Src != want[i][0] || e.Dst != want[i][1] {
			t.Fatalf("edge %d: Parquet %v, text %v", i, e, want[i])
		}
	}
	if vs := readAll[vertex](t, filepath.Join(pq, "vertices.parquet")); len(vs) != 128 || vs[127].ID != 127 {
		t.Errorf("vertices.parquet: %d rows", len(vs))
	}
}

func readAll[T any](t *testing.T, path string) []T {
	t.Helper()
	src, err := parquet.Open[T](path)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := src.Splits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, sp := range splits {
		err := src.Read(context.Background(), sp, func(b []T) error { out = append(out, b...); return nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestGenPointsKMeans(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "gen", "points", "--n", "1000", "--dims", "3", "--k", "4", "--seed", "2", "--out", dir)
	points := readFields(t, filepath.Join(dir, "points.txt"))
	if len(points) != 1000 {
		t.Fatalf("%d points, want 1000", len(points))
	}
	for i, p := range points {
		for _, x := range parseFloats(t, p) {
			if len(p) != 3 || math.IsNaN(x) || math.Abs(x) > 200 {
				t.Fatalf("point %d: %v", i+1, p)
			}
		}
	}
	centroids := readFields(t, filepath.Join(dir, "centroids.txt"))
	if len(centroids) != 4 {
		t.Fatalf("%d centroids, want 4", len(centroids))
	}
	for i, c := range centroids {
		if c[0] != strconv.Itoa(i+1) || !slices.Equal(c[1:], points[i]) {
			t.Errorf("centroid line %d is %v, want id %d and point %v", i+1, c, i+1, points[i])
		}
	}
}

func TestGenPointsRegression(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "gen", "points", "--kind", "regression", "--n", "200", "--dims", "2", "--noise", "0", "--out", dir)
	truth := readFields(t, filepath.Join(dir, "truth.txt"))
	if len(truth) != 2 || truth[0][0] != "w" || len(truth[0]) != 3 || truth[1][0] != "b" || len(truth[1]) != 2 {
		t.Fatalf("truth.txt: %v", truth)
	}
	w, b := parseFloats(t, truth[0][1:]), parseFloats(t, truth[1][1:])[0]
	rows := readFields(t, filepath.Join(dir, "points.txt"))
	if len(rows) != 200 {
		t.Fatalf("%d samples, want 200", len(rows))
	}
	for i, r := range rows {
		v := parseFloats(t, r)
		if len(v) != 3 {
			t.Fatalf("sample %d: %v", i+1, r)
		}
		if y := w[0]*v[0] + w[1]*v[1] + b; math.Abs(y-v[2]) > 1e-12 {
			t.Fatalf("sample %d: y = %v, w·x+b = %v", i+1, v[2], y)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "centroids.txt")); err == nil {
		t.Error("regression wrote centroids.txt")
	}
}

func TestGenGraphPointsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "graph", "--vertices", "100", "--edges", "10", "--out", dir}, "power of two"},
		{[]string{"gen", "graph", "--vertices", "64", "--out", dir}, "--edges"},
		{[]string{"gen", "graph", "--grid", "3x2", "--vertices", "64", "--out", dir}, "--grid"},
		{[]string{"gen", "graph", "--grid", "3by2", "--out", dir}, "3by2"},
		{[]string{"gen", "graph", "--grid", "0x2", "--out", dir}, "0x2"},
		{[]string{"gen", "graph", "--grid", "2x2", "--format", "csv", "--out", dir}, "csv"},
		{[]string{"gen", "graph", "--grid", "2x2"}, "out"},
		{[]string{"gen", "graph", "--vertices", "64", "--edges", "10", "--rmat-a", "0.9", "--out", dir}, "exceed 1"},
		{[]string{"gen", "points", "--n", "10", "--dims", "2", "--kind", "spiral", "--out", dir}, "spiral"},
		{[]string{"gen", "points", "--n", "2", "--dims", "2", "--k", "3", "--out", filepath.Join(dir, "p")}, "--k"},
		{[]string{"gen", "points", "--n", "10", "--dims", "0", "--out", dir}, "--dims"},
		{[]string{"gen", "points", "--n", "10", "--dims", "2", "--noise", "1", "--out", dir}, "--noise"},
		{[]string{"gen", "points", "--n", "10", "--out", dir}, "dims"},
	} {
		t.Run(fmt.Sprint(c.args[1:]), func(t *testing.T) {
			code, _, stderr := runWeir(context.Background(), c.args...)
			checkFailure(t, code, stderr, c.want)
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed commands left %v", ents)
	}
	// a file where the directory should be
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runWeir(context.Background(), "gen", "graph", "--grid", "2x2", "--out", file)
	checkFailure(t, code, stderr, "file")
}
