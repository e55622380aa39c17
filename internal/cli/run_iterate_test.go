package cli

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
	"github.com/weirdata/weir/iterate"
)

// runIterateJob runs `weir run` with args at parallelism 1 and 3 (under a
// small budget), to stdout and to --output, and checks each output with check.
func runIterateJob(t *testing.T, args []string, check func(t *testing.T, out string)) {
	t.Helper()
	for _, p := range []string{"1", "3"} {
		d := newRunDirs(t)
		a := append(slices.Clone(args), "--parallelism", p, "--memory", "1MiB", "--tmp", d.tmp)
		code, stdout, stderr := runWeir(context.Background(), a...)
		if code != 0 || !isSuperstepReport(stderr) {
			t.Fatalf("%v: exit %d, stderr %q", a, code, stderr)
		}
		check(t, stdout)
		d.check(t, false)
		d = newRunDirs(t)
		a = append(slices.Clone(args), "--parallelism", p, "--tmp", d.tmp, "--output", d.output())
		code, stdout, stderr = runWeir(context.Background(), a...)
		got, _ := os.ReadFile(d.output())
		if code != 0 || !isSuperstepReport(stderr) || stdout != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", a, code, stdout, stderr)
		}
		check(t, string(got))
		d.check(t, true)
	}
}

// isSuperstepReport reports whether s is what printSupersteps writes for one
// iteration: a header with the number of supersteps, then one line for each,
// numbered from 1.
func isSuperstepReport(s string) bool {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var n int
	if len(lines) < 2 || !strings.HasSuffix(lines[0], " supersteps") {
		return false
	}
	f := strings.Fields(lines[0])
	if _, err := fmt.Sscan(f[len(f)-2], &n); err != nil || n != len(lines)-1 {
		return false
	}
	for i, l := range lines[1:] {
		var step int
		if _, err := fmt.Sscanf(l, "  superstep %d", &step); err != nil || step != i+1 {
			return false
		}
	}
	return true
}

// exactly returns a check that the output is want.
func exactly(want string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		t.Helper()
		if out != want {
			t.Fatalf("output\n%s\nwant\n%s", out, want)
		}
	}
}

func pairsOf(es []iterate.Edge) [][2]int64 {
	var out [][2]int64
	for _, e := range es {
		out = append(out, [2]int64{e.Src, e.Dst})
	}
	return out
}

func TestRunIteratePageRank(t *testing.T) {
	// Flink's PageRankData: pages 1..15, the oracle's vertices 0..14
	edges := pairsOf(iterate.PageRankLinks)
	for i := range edges {
		edges[i][0]--
		edges[i][1]--
	}
	for _, tc := range []struct {
		args       []string
		iterations int
		eps        float64
	}{
		{nil, 10, 1e-4},
		{[]string{"--iterations", "50", "--epsilon", "1e-7"}, 50, 1e-7},
		{[]string{"--iterations", "3", "--epsilon", "-1"}, 3, -1},
	} {
		want, steps := oracle.PageRankConverged(15, edges, iterate.Damping, tc.eps, tc.iterations)
		if tc.iterations == 50 && steps == tc.iterations {
			t.Fatalf("%v: the oracle did not converge: pick another epsilon", tc.args)
		}
		runIterateJob(t, append([]string{"run", "pagerank"}, tc.args...), func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 15 {
				t.Fatalf("%v: %d lines, want 15:\n%s", tc.args, len(lines), out)
			}
			for i, l := range lines {
				var id int64
				var rank float64
				if _, err := fmt.Sscanf(l, "%d %g", &id, &rank); err != nil || id != int64(i+1) {
					t.Fatalf("%v: line %d is %q", tc.args, i+1, l)
				}
				if math.Abs(rank-want[i]) > 1e-12 {
					t.Fatalf("%v: page %d has rank %v, the oracle's %v", tc.args, id, rank, want[i])
				}
			}
		})
	}
}

// TestRunIteratePageRankParquet: pages and links from Parquet files as weir
// gen graph writes them.
func TestRunIteratePageRankParquet(t *testing.T) {
	dir := t.TempDir()
	pages, links := filepath.Join(dir, "pages.parquet"), filepath.Join(dir, "links.parquet")
	g := gen.Grid(3, 3)
	if err := gen.WriteVertices(pages, gen.Parquet, gen.Vertices(9)); err != nil {
		t.Fatal(err)
	}
	if err := gen.WriteEdges(links, gen.Parquet, g); err != nil {
		t.Fatal(err)
	}
	var edges [][2]int64
	for s, d := range g {
		edges = append(edges, [2]int64{s, d})
	}
	want := oracle.PageRank(9, edges, iterate.Damping, 4)
	var b strings.Builder
	for v, r := range want {
		fmt.Fprintf(&b, "%d %.9f\n", v, r)
	}
	runIterateJob(t, []string{"run", "pagerank", "--pages", pages, "--links", links, "--iterations", "4", "--epsilon", "-1"},
		func(t *testing.T, out string) {
			var got strings.Builder
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				var id int64
				var rank float64
				fmt.Sscanf(l, "%d %g", &id, &rank)
				fmt.Fprintf(&got, "%d %.9f\n", id, rank)
			}
			if got.String() != b.String() {
				t.Fatalf("ranks\n%s\nthe oracle's\n%s", got.String(), b.String())
			}
		})
}

func TestRunIterateComponents(t *testing.T) {
	cc := oracle.Components(iterate.ComponentVertices, pairsOf(iterate.ComponentEdges))
	var b strings.Builder
	for _, v := range iterate.ComponentVertices {
		fmt.Fprintf(&b, "%d %d\n", v, cc[v])
	}
	runIterateJob(t, []string{"run", "connected-components"}, exactly(b.String()))

	// a Parquet edge file as weir gen graph writes it; vertices from the edges
	dir := t.TempDir()
	g := gen.Grid(4, 3) // one component
	pq := filepath.Join(dir, "edges.parquet")
	if err := gen.WriteEdges(pq, gen.Parquet, g); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for v := range int64(12) {
		fmt.Fprintf(&want, "%d 0\n", v)
	}
	runIterateJob(t, []string{"run", "connected-components", "--edges", pq}, exactly(want.String()))
	// a text file with a vertex that has no edges
	vs := writeRunInput(t, "vertices.txt", "1", "2", "3", "9")
	es := writeRunInput(t, "edges.txt", "3 2", "2\t1")
	runIterateJob(t, []string{"run", "connected-components", "--vertices", vs, "--edges", es}, exactly("1 1\n2 1\n3 1\n9 9\n"))
}

func TestRunIterateShortestPaths(t *testing.T) {
	var oes []oracle.WeightedEdge
	for _, e := range iterate.PathEdges {
		oes = append(oes, oracle.WeightedEdge{Src: e.Src, Dst: e.Dst, Weight: e.Weight})
	}
	for _, source := range []int64{1, 3} {
		want := oracle.ShortestPaths(source, oes)
		var b strings.Builder
		for _, v := range slices.Sorted(maps.Keys(want)) {
			fmt.Fprintf(&b, "%d %s\n", v, strconv.FormatFloat(want[v], 'g', -1, 64))
		}
		runIterateJob(t, []string{"run", "sssp", "--source", strconv.FormatInt(source, 10)}, exactly(b.String()))
	}
	es := writeRunInput(t, "edges.txt", "1 2 0.5", "2 3 0.25", "1 3 1", "4 1 1")
	runIterateJob(t, []string{"run", "sssp", "--edges", es}, exactly("1 0\n2 0.5\n3 0.75\n"))
}

// kmeansDefaultLines is what `weir run kmeans` prints for its default data,
// by Lloyd's oracle: "cluster x y" lines, sorted.
func kmeansDefaultLines() []string {
	var points [][]float64
	for _, p := range iterate.KMeansPoints {
		points = append(points, p.X)
	}
	var cs []oracle.Centroid
	for _, c := range iterate.KMeansCentroids {
		cs = append(cs, oracle.Centroid{ID: c.ID, X: c.X})
	}
	_, ids := oracle.KMeans(points, cs, 10)
	var lines []string
	for i, p := range points {
		lines = append(lines, fmt.Sprintf("%d %s %s\n", ids[i], g(p[0]), g(p[1])))
	}
	slices.Sort(lines)
	return lines
}

func TestRunIterateKMeans(t *testing.T) {
	runIterateJob(t, []string{"run", "kmeans"}, exactly(strings.Join(kmeansDefaultLines(), "")))
	// one dimension, from files: 0 and 1 go to centroid 7, 10 and 11 to 8
	pts := writeRunInput(t, "points.txt", "0", "1", "10", "11")
	cen := writeRunInput(t, "centroids.txt", "8 1", "7 0")
	runIterateJob(t, []string{"run", "kmeans", "--points", pts, "--centroids", cen, "--iterations", "3"},
		exactly("7 0\n7 1\n8 10\n8 11\n"))
}

// gradientDescent is the oracle of linear-regression's default run: steps of
// batch gradient descent on the mean squared loss, from zero.
func gradientDescent(samples []iterate.Sample, steps int, step float64) []float64 {
	theta := make([]float64, 1+len(samples[0].X))
	for range steps {
		g := make([]float64, len(theta))
		for _, s := range samples {
			e := theta[0] - s.Y
			for i, x := range s.X {
				e += theta[1+i] * x
			}
			g[0] += e
			for i, x := range s.X {
				g[1+i] += e * x
			}
		}
		for i := range theta {
			theta[i] -= step * g[i] / float64(len(samples))
		}
	}
	return theta
}

func TestRunIterateRegression(t *testing.T) {
	check := func(want []float64) func(t *testing.T, out string) {
		return func(t *testing.T, out string) {
			t.Helper()
			fields := strings.Fields(out)
			if len(fields) != len(want) || strings.Count(out, "\n") != 1 {
				t.Fatalf("output %q, want one line of %d numbers", out, len(want))
			}
			for i, f := range fields {
				x, err := strconv.ParseFloat(f, 64)
				if err != nil || math.Abs(x-want[i]) > 1e-9 {
					t.Fatalf("coefficient %d is %q, want %v", i, f, want[i])
				}
			}
		}
	}
	runIterateJob(t, []string{"run", "linear-regression"}, check(gradientDescent(iterate.RegressionSamples, 10, 0.01)))
	// y = 1 + 2 x1 - x2 exactly: enough steps reach the least-squares fit
	in := writeRunInput(t, "samples.txt", "0 0 1", "1 0 3", "0 1 0", "1 1 2", "-1 0.5 -1.5")
	xs := [][]float64{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {-1, 0.5}}
	w, b := oracle.LeastSquares(xs, []float64{1, 3, 0, 2, -1.5})
	want := []float64{b, w[0], w[1]}
	got := func(t *testing.T, out string) {
		t.Helper()
		for i, f := range strings.Fields(out) {
			if x, _ := strconv.ParseFloat(f, 64); math.Abs(x-want[i]) > 1e-6 {
				t.Fatalf("model %q, least squares %v", out, want)
			}
		}
	}
	runIterateJob(t, []string{"run", "linear-regression", "--input", in, "--iterations", "300", "--step", "0.5"}, got)
}

func TestRunIterateClosure(t *testing.T) {
	var b strings.Builder
	for _, p := range oracle.TransitiveClosure(pairsOf(iterate.ComponentEdges)) {
		fmt.Fprintf(&b, "%d %d\n", p[0], p[1])
	}
	runIterateJob(t, []string{"run", "transitive-closure"}, exactly(b.String()))
	es := writeRunInput(t, "edges.txt", "1 2", "2 3", "3 1", "4 5")
	runIterateJob(t, []string{"run", "transitive-closure", "--edges", es},
		exactly("1 1\n1 2\n1 3\n2 1\n2 2\n2 3\n3 1\n3 2\n3 3\n4 5\n"))
}

func TestRunIterateErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.txt")
	badEdges := writeRunInput(t, "edges.txt", "1 2", "2 x")
	badPages := writeRunInput(t, "pages.txt", "1", "", "3")
	badWeights := writeRunInput(t, "wedges.txt", "1 2 3", "2 3 three")
	badPoints := writeRunInput(t, "points.txt", "1 2", "3 4", "5 y")
	badCentroids := writeRunInput(t, "centroids.txt", "c1 1 2")
	badSamples := writeRunInput(t, "samples.txt", "1 2", "3")
	for _, tc := range []struct {
		args []string
		want string // stderr's one line contains this
	}{
		{[]string{"run", "pagerank", "--links", badEdges}, badEdges + ` line 2: vertex "x": not an integer`},
		{[]string{"run", "pagerank", "--pages", badPages}, badPages + ` line 2: "": want a vertex id`},
		{[]string{"run", "pagerank", "--pages", missing}, "iterate: pagerank: pages file: stat " + missing},
		{[]string{"run", "connected-components", "--edges", badEdges}, badEdges + ` line 2: vertex "x"`},
		{[]string{"run", "sssp", "--edges", badWeights}, badWeights + ` line 2: weight "three": not a number`},
		{[]string{"run", "kmeans", "--points", badPoints}, badPoints + ` line 3: coordinate "y": not a number`},
		{[]string{"run", "kmeans", "--centroids", badCentroids}, badCentroids + ` line 1: id "c1": not an integer`},
		{[]string{"run", "linear-regression", "--input", badSamples}, badSamples + ` line 2: "3": want features and a target`},
		{[]string{"run", "transitive-closure", "--edges", badEdges}, badEdges + ` line 2: vertex "x"`},
		{[]string{"run", "transitive-closure", "--iterations", "0"}, "--iterations must be positive"},
		{[]string{"run", "linear-regression", "--step", "0"}, "--step must be positive"},
	} {
		for _, p := range []string{"1", "3"} {
			d := newRunDirs(t)
			args := append(slices.Clone(tc.args), "--tmp", d.tmp, "--output", d.output(), "--parallelism", p)
			code, stdout, stderr := runWeir(context.Background(), args...)
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "weir: ") ||
				!strings.Contains(stderr, tc.want) {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 1 and one line containing %q", args, code, stdout, stderr, tc.want)
			}
			d.check(t, false)
		}
	}
}

// readParquet reads the rows of the Parquet file path into R, in file order,
// with weir's Parquet source, and checks that the file's columns are exactly
// cols, holding values of the Go types of types (int64 for INT64, float64 for
// DOUBLE, string for STRING), read off the column statistics.
func readParquet[R any](t *testing.T, path string, cols []string, types []any) []R {
	t.Helper()
	ctx := context.Background()
	src, err := parquet.Open[R](path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := src.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(st.Columns)); !slices.Equal(got, slices.Sorted(slices.Values(cols))) {
		t.Fatalf("%s: columns %v, want %v", path, got, cols)
	}
	for i, c := range cols {
		if st.Rows > 0 && reflect.TypeOf(st.Columns[c].Min) != reflect.TypeOf(types[i]) {
			t.Fatalf("%s: column %s holds %T, want %T", path, c, st.Columns[c].Min, types[i])
		}
	}
	splits, err := src.Splits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []R
	for _, s := range splits {
		if err := src.Read(ctx, s, func(b []R) error { out = append(out, b...); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if int64(len(out)) != st.Rows {
		t.Fatalf("%s: read %d rows, the footer says %d", path, len(out), st.Rows)
	}
	return out
}

// runIterateParquet runs `weir run` with args at parallelism 1 and 3 to
// stdout, checks that output with check, then runs it again with --output
// NAME.parquet (the extension in either case) and checks that the file, read
// back by lines (the rows in text form), holds exactly the text output, and
// that the output directory holds only the file and the spill directory
// nothing.
func runIterateParquet(t *testing.T, args []string, check func(t *testing.T, out string), lines func(t *testing.T, path string) string) {
	t.Helper()
	for i, p := range []string{"1", "3"} {
		tmp := t.TempDir()
		a := append(slices.Clone(args), "--parallelism", p, "--tmp", tmp)
		code, text, stderr := runWeir(context.Background(), a...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", a, code, stderr)
		}
		check(t, text)
		dir := t.TempDir()
		name := []string{"result.parquet", "result.PARQUET"}[i]
		out := filepath.Join(dir, name)
		a = append(slices.Clone(args), "--parallelism", p, "--memory", "1MiB", "--tmp", tmp, "--output", out)
		code, stdout, stderr := runWeir(context.Background(), a...)
		if code != 0 || stdout != "" || !isSuperstepReport(stderr) {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", a, code, stdout, stderr)
		}
		if got := lines(t, out); !sameResult(got, text) {
			t.Fatalf("%v: the Parquet rows are\n%s\nthe text output\n%s", a, got, text)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != name {
			t.Errorf("%v: output directory holds %v, want %s", a, ents, name)
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("%v: spill directory holds %v", a, ents)
		}
	}
}

// sameResult reports whether the lines of a and b have the same fields, equal
// as strings or, for numbers, within 1e-12 relative: the order in which a
// reduce adds floats depends on the order in which records arrive.
func sameResult(a, b string) bool {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) {
		return false
	}
	for i := range la {
		fa, fb := strings.Fields(la[i]), strings.Fields(lb[i])
		if len(fa) != len(fb) {
			return false
		}
		for j := range fa {
			if fa[j] == fb[j] {
				continue
			}
			x, errx := strconv.ParseFloat(fa[j], 64)
			y, erry := strconv.ParseFloat(fb[j], 64)
			if errx != nil || erry != nil || math.Abs(x-y) > 1e-12*max(1, math.Abs(y)) {
				return false
			}
		}
	}
	return true
}

// g formats x as the text outputs do.
func g(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func TestRunIterateParquetOutput(t *testing.T) {
	type rank struct {
		ID   int64   `weir:"id"`
		Rank float64 `weir:"rank"`
	}
	type component struct {
		Vertex    int64 `weir:"vertex"`
		Component int64 `weir:"component"`
	}
	type distance struct {
		Vertex   int64   `weir:"vertex"`
		Distance float64 `weir:"distance"`
	}
	type pair struct {
		Src int64 `weir:"src"`
		Dst int64 `weir:"dst"`
	}
	edges := pairsOf(iterate.PageRankLinks)
	for i := range edges {
		edges[i][0]--
		edges[i][1]--
	}
	t.Run("pagerank", func(t *testing.T) {
		want, _ := oracle.PageRankConverged(15, edges, iterate.Damping, 1e-4, 10)
		runIterateParquet(t, []string{"run", "pagerank"}, func(t *testing.T, out string) {
			if n := strings.Count(out, "\n"); n != 15 {
				t.Fatalf("%d lines, want 15", n)
			}
		}, func(t *testing.T, path string) string {
			var b strings.Builder
			for i, r := range readParquet[rank](t, path, []string{"id", "rank"}, []any{int64(0), 0.0}) {
				if r.ID != int64(i+1) || math.Abs(r.Rank-want[i]) > 1e-12 {
					t.Fatalf("row %d is %v, the oracle's page %d has rank %v", i, r, i+1, want[i])
				}
				fmt.Fprintf(&b, "%d %s\n", r.ID, g(r.Rank))
			}
			return b.String()
		})
	})
	componentLines := func(t *testing.T, path string) string {
		var b strings.Builder
		for _, r := range readParquet[component](t, path, []string{"vertex", "component"}, []any{int64(0), int64(0)}) {
			fmt.Fprintf(&b, "%d %d\n", r.Vertex, r.Component)
		}
		return b.String()
	}
	t.Run("connected-components", func(t *testing.T) {
		cc := oracle.Components(iterate.ComponentVertices, pairsOf(iterate.ComponentEdges))
		var b strings.Builder
		for _, v := range iterate.ComponentVertices {
			fmt.Fprintf(&b, "%d %d\n", v, cc[v])
		}
		runIterateParquet(t, []string{"run", "connected-components"}, exactly(b.String()), componentLines)
		// a Parquet edge file in, Parquet out
		pq := filepath.Join(t.TempDir(), "edges.parquet")
		if err := gen.WriteEdges(pq, gen.Parquet, gen.Grid(3, 2)); err != nil {
			t.Fatal(err)
		}
		runIterateParquet(t, []string{"run", "connected-components", "--edges", pq},
			exactly("0 0\n1 0\n2 0\n3 0\n4 0\n5 0\n"), componentLines)
	})
	t.Run("sssp", func(t *testing.T) {
		var oes []oracle.WeightedEdge
		for _, e := range iterate.PathEdges {
			oes = append(oes, oracle.WeightedEdge{Src: e.Src, Dst: e.Dst, Weight: e.Weight})
		}
		want := oracle.ShortestPaths(1, oes)
		var b strings.Builder
		for _, v := range slices.Sorted(maps.Keys(want)) {
			fmt.Fprintf(&b, "%d %s\n", v, g(want[v]))
		}
		runIterateParquet(t, []string{"run", "sssp"}, exactly(b.String()), func(t *testing.T, path string) string {
			var b strings.Builder
			for _, r := range readParquet[distance](t, path, []string{"vertex", "distance"}, []any{int64(0), 0.0}) {
				fmt.Fprintf(&b, "%d %s\n", r.Vertex, g(r.Distance))
			}
			return b.String()
		})
	})
	t.Run("kmeans", func(t *testing.T) {
		type point2 struct {
			Cluster int64   `weir:"cluster"`
			X1      float64 `weir:"x1"`
			X2      float64 `weir:"x2"`
		}
		type point1 struct {
			Cluster int64   `weir:"cluster"`
			X1      float64 `weir:"x1"`
		}
		type point3 struct {
			Cluster    int64 `weir:"cluster"`
			X1, X2, X3 float64
		}
		runIterateParquet(t, []string{"run", "kmeans"}, exactly(strings.Join(kmeansDefaultLines(), "")), func(t *testing.T, path string) string {
			var b strings.Builder
			for _, r := range readParquet[point2](t, path, []string{"cluster", "x1", "x2"}, []any{int64(0), 0.0, 0.0}) {
				fmt.Fprintf(&b, "%d %s %s\n", r.Cluster, g(r.X1), g(r.X2))
			}
			return b.String()
		})
		// one dimension, from files: 0 and 1 go to centroid 7, 10 and 11 to 8
		pts := writeRunInput(t, "points.txt", "0", "1", "10", "11")
		cen := writeRunInput(t, "centroids.txt", "8 1", "7 0")
		runIterateParquet(t, []string{"run", "kmeans", "--points", pts, "--centroids", cen, "--iterations", "3"},
			exactly("7 0\n7 1\n8 10\n8 11\n"), func(t *testing.T, path string) string {
				var b strings.Builder
				for _, r := range readParquet[point1](t, path, []string{"cluster", "x1"}, []any{int64(0), 0.0}) {
					fmt.Fprintf(&b, "%d %s\n", r.Cluster, g(r.X1))
				}
				return b.String()
			})
		// three dimensions, ids of two digits: rows in the text lines' order
		// ("10 ..." before "9 ..."); the oracle clusters them
		pts = writeRunInput(t, "points.txt", "0 0 0", "0 1 0", "5 5 5", "5 6 5", "-1 0 0")
		cen = writeRunInput(t, "centroids.txt", "9 0 0 0", "10 5 5 5")
		_, ids := oracle.KMeans([][]float64{{0, 0, 0}, {0, 1, 0}, {5, 5, 5}, {5, 6, 5}, {-1, 0, 0}},
			[]oracle.Centroid{{ID: 9, X: []float64{0, 0, 0}}, {ID: 10, X: []float64{5, 5, 5}}}, 2)
		if !slices.Equal(ids, []int64{9, 9, 10, 10, 9}) {
			t.Fatalf("the oracle's clusters %v", ids)
		}
		runIterateParquet(t, []string{"run", "kmeans", "--points", pts, "--centroids", cen, "--iterations", "2"},
			exactly("10 5 5 5\n10 5 6 5\n9 -1 0 0\n9 0 0 0\n9 0 1 0\n"), func(t *testing.T, path string) string {
				var b strings.Builder
				for _, r := range readParquet[point3](t, path, []string{"x1", "x2", "x3", "cluster"}, []any{0.0, 0.0, 0.0, int64(0)}) {
					fmt.Fprintf(&b, "%d %s %s %s\n", r.Cluster, g(r.X1), g(r.X2), g(r.X3))
				}
				return b.String()
			})
	})
	t.Run("linear-regression", func(t *testing.T) {
		type coefficient struct {
			Name  string  `weir:"name"`
			Value float64 `weir:"value"`
		}
		want := gradientDescent(iterate.RegressionSamples, 10, 0.01)
		check := func(t *testing.T, out string) {
			for i, f := range strings.Fields(out) {
				if x, _ := strconv.ParseFloat(f, 64); math.Abs(x-want[i]) > 1e-9 {
					t.Fatalf("model %q, want %v", out, want)
				}
			}
		}
		runIterateParquet(t, []string{"run", "linear-regression"}, check, func(t *testing.T, path string) string {
			var vals []string
			for i, r := range readParquet[coefficient](t, path, []string{"name", "value"}, []any{"", 0.0}) {
				if wantName := []string{"b", "w1"}[min(i, 1)]; r.Name != wantName || i > 1 {
					t.Fatalf("row %d is %v, want the coefficient %s", i, r, wantName)
				}
				vals = append(vals, g(r.Value))
			}
			return strings.Join(vals, " ") + "\n"
		})
		// two features
		in := writeRunInput(t, "samples.txt", "0 0 1", "1 0 3", "0 1 0", "1 1 2", "-1 0.5 -1.5")
		runIterateParquet(t, []string{"run", "linear-regression", "--input", in, "--iterations", "5", "--step", "0.5"},
			func(*testing.T, string) {}, func(t *testing.T, path string) string {
				var names, vals []string
				for _, r := range readParquet[coefficient](t, path, []string{"name", "value"}, []any{"", 0.0}) {
					names = append(names, r.Name)
					vals = append(vals, g(r.Value))
				}
				if !slices.Equal(names, []string{"b", "w1", "w2"}) {
					t.Fatalf("coefficients %v, want b, w1, w2", names)
				}
				return strings.Join(vals, " ") + "\n"
			})
	})
	t.Run("transitive-closure", func(t *testing.T) {
		var b strings.Builder
		for _, p := range oracle.TransitiveClosure(pairsOf(iterate.ComponentEdges)) {
			fmt.Fprintf(&b, "%d %d\n", p[0], p[1])
		}
		runIterateParquet(t, []string{"run", "transitive-closure"}, exactly(b.String()), func(t *testing.T, path string) string {
			var b strings.Builder
			for _, r := range readParquet[pair](t, path, []string{"src", "dst"}, []any{int64(0), int64(0)}) {
				fmt.Fprintf(&b, "%d %d\n", r.Src, r.Dst)
			}
			return b.String()
		})
	})
}

// TestRunIterateParquetErrors: a job that fails, before it starts or while it
// runs, leaves no Parquet file.
func TestRunIterateParquetErrors(t *testing.T) {
	badEdges := writeRunInput(t, "edges.txt", "1 2", "2 x")
	badCentroids := writeRunInput(t, "centroids.txt", "c1 1 2")
	wide := writeRunInput(t, "wide.txt", "1 1 2 3 4 5 6 7 8 9")
	widePoints := writeRunInput(t, "widep.txt", "1 2 3 4 5 6 7 8 9")
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // stderr's one line contains this
	}{
		{[]string{"run", "pagerank", "--links", badEdges}, "iterate: pagerank: " + badEdges + ` line 2: vertex "x": not an integer`},
		{[]string{"run", "connected-components", "--edges", badEdges}, badEdges + ` line 2: vertex "x"`},
		{[]string{"run", "transitive-closure", "--edges", badEdges}, badEdges + ` line 2: vertex "x"`},
		{[]string{"run", "kmeans", "--centroids", badCentroids}, "iterate: kmeans: " + badCentroids + ` line 1: id "c1": not an integer`},
		{[]string{"run", "kmeans", "--centroids", empty}, "iterate: kmeans: centroids file: " + empty + " holds no centroid"},
		{[]string{"run", "kmeans", "--centroids", wide, "--points", widePoints}, "iterate: kmeans: Parquet output holds points of 1 to 8 coordinates, these have 9"},
		// two dimensions from the centroids, three in the points: the job fails
		{[]string{"run", "kmeans", "--points", writeRunInput(t, "p3.txt", "1 2 3")}, "a point has 3 coordinates"},
	} {
		for _, p := range []string{"1", "3"} {
			dir, tmp := t.TempDir(), t.TempDir()
			args := append(slices.Clone(tc.args), "--tmp", tmp, "--output", filepath.Join(dir, "x.parquet"), "--parallelism", p)
			code, stdout, stderr := runWeir(context.Background(), args...)
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 1 and one line containing %q", args, code, stdout, stderr, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("%v: output directory holds %v", args, ents)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("%v: spill directory holds %v", args, ents)
			}
		}
	}
}
