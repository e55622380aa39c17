package gen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/parquet"
)

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteEdgesText(&buf, Grid(2, 2)); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "0 1\n0 2\n1 3\n2 3\n"; got != want {
		t.Errorf("edges: %q, want %q", got, want)
	}
	buf.Reset()
	if err := WriteVerticesText(&buf, Vertices(3)); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "0\n1\n2\n"; got != want {
		t.Errorf("vertices: %q, want %q", got, want)
	}
	buf.Reset()
	pts := [][]float64{{1, -2.5}, {0.1, 1e-300}}
	if err := WritePointsText(&buf, slices.Values(pts)); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "1 -2.5\n0.1 1e-300\n"; got != want {
		t.Errorf("points: %q, want %q", got, want)
	}
	buf.Reset()
	if err := WriteCentroidsText(&buf, pts); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "1 1 -2.5\n2 0.1 1e-300\n"; got != want {
		t.Errorf("centroids: %q, want %q", got, want)
	}
}

// TestWritePointsRoundTrip checks that every coordinate reads back exactly.
func TestWritePointsRoundTrip(t *testing.T) {
	_, points, err := Points(500, 3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePointsText(&buf, points); err != nil {
		t.Fatal(err)
	}
	var got [][]float64
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var p []float64
		for _, f := range strings.Split(sc.Text(), " ") {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			p = append(p, x)
		}
		got = append(got, p)
	}
	if !slices.EqualFunc(got, slices.Collect(points), slices.Equal) {
		t.Error("points read back differ")
	}
}

// TestWriteParquet writes a graph as Parquet and reads it back with weir's own
// Parquet source.
func TestWriteParquet(t *testing.T) {
	dir := t.TempDir()
	nEdges := 300000 // three row groups, the last one partial
	if testing.Short() {
		nEdges = parquetRowGroupRows + 1000 // two
	}
	g := mustGraph(t, 1<<8, int64(nEdges), 4, DefaultA, DefaultB, DefaultC)
	ePath, vPath := filepath.Join(dir, "edges.parquet"), filepath.Join(dir, "vertices.parquet")
	if err := WriteEdges(ePath, Parquet, g); err != nil {
		t.Fatal(err)
	}
	if err := WriteVertices(vPath, Parquet, Vertices(1<<8)); err != nil {
		t.Fatal(err)
	}
	type edge struct{ Src, Dst int64 }
	type vertex struct{ ID int64 }
	edges := readParquet[edge](t, ePath)
	want := collect(t, g)
	if len(edges) != len(want) {
		t.Fatalf("read %d edges, want %d", len(edges), len(want))
	}
	for i, e := range edges {
		if [2]int64{e.Src, e.Dst} != want[i] {
			t.Fatalf("edge %d: %v, want %v", i, e, want[i])
		}
	}
	vs := readParquet[vertex](t, vPath)
	if len(vs) != 1<<8 || vs[0].ID != 0 || vs[255].ID != 255 {
		t.Errorf("vertices: %d rows, first %v", len(vs), vs[:min(len(vs), 1)])
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want the 2 files", len(entries))
	}
}

// readParquet reads all rows of a file, in split order.
func readParquet[T any](t *testing.T, path string) []T {
	t.Helper()
	src, err := parquet.Open[T](path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	splits, err := src.Splits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, sp := range splits {
		if err := src.Read(ctx, sp, func(batch []T) error { out = append(out, batch...); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestWriteTextFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "edges.txt")
	if err := WriteEdges(path, Text, Grid(2, 1)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "0 1\n" {
		t.Errorf("edges.txt: %q, %v", b, err)
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("boom")
	err := WriteFile(filepath.Join(dir, "x.txt"), func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "gen: ") {
		t.Errorf("error %v, want gen: ... boom", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir.txt"), func(io.Writer) error { return nil }); err == nil {
		t.Error("missing directory: no error")
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range []Format{Text, Parquet} {
		g, err := ParseFormat(f.String())
		if err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("csv: no error")
	}
}
