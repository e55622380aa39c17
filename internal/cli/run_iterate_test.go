package cli

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

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

func TestRunIterateKMeans(t *testing.T) {
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
		lines = append(lines, fmt.Sprintf("%d %s %s", ids[i], strconv.FormatFloat(p[0], 'g', -1, 64), strconv.FormatFloat(p[1], 'g', -1, 64)))
	}
	slices.Sort(lines)
	runIterateJob(t, []string{"run", "kmeans"}, exactly(strings.Join(lines, "\n")+"\n"))
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
		{[]string{"run", "pagerank", "--pages", missing}, "iterate: pagerank: --pages: stat " + missing},
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
