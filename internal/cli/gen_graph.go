package cli

import (
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/internal/gen"
)

// newGenGraphCommand is `weir gen graph`, which writes the input of the graph
// iteration jobs.
func newGenGraphCommand() *cobra.Command {
	var (
		out            string
		vertices, nEdg int64
		seed           uint64
		grid, format   string
		a, b, c        float64
	)
	cmd := &cobra.Command{
		Use:   "graph --out DIR (--vertices N --edges M | --grid WxH) [--seed S] [--format text|parquet]",
		Short: "Write an R-MAT graph as Graph500 makes it, or a grid graph",
		Long: `Write a graph as DIR/vertices.EXT (one vertex id a line, or a Parquet column id)
and DIR/edges.EXT (a line "src dst" per edge, or Parquet columns src and dst, both
INT64), EXT being txt or parquet after --format.

With --vertices and --edges, the graph is an R-MAT graph as Graph500's Kronecker
generator makes it: N must be a power of two; each edge picks its cell of the
adjacency matrix one bit at a time with the probabilities --rmat-a, --rmat-b,
--rmat-c and 1-a-b-c; vertex ids are permuted (seeded) so that degrees are not
sorted by id. Self loops and duplicate edges are kept, as in Graph500. The
vertices file lists all N ids, 0..N-1.

With --grid WxH, the graph is a W×H grid: vertex (x, y) has id y*W+x and each
undirected edge is listed once, from the smaller id.

The same seed gives the same files. Each file is written under a temporary
name and renamed when complete.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			f, err := gen.ParseFormat(format)
			if err != nil {
				return &usageError{err: fmt.Errorf("--format: %w", err)}
			}
			var n int64
			var edges iter.Seq2[int64, int64]
			fl := cmd.Flags()
			if fl.Changed("grid") {
				if fl.Changed("vertices") || fl.Changed("edges") {
					return &usageError{err: fmt.Errorf("--grid sets the vertices and edges: give either --grid or --vertices and --edges")}
				}
				w, h, err := parseGrid(grid)
				if err != nil {
					return &usageError{err: err}
				}
				n, edges = w*h, gen.Grid(w, h)
			} else {
				if !fl.Changed("vertices") || !fl.Changed("edges") {
					return &usageError{err: fmt.Errorf("give --vertices and --edges, or --grid")}
				}
				g, err := gen.Graph(vertices, nEdg, seed, a, b, c)
				if err != nil {
					return &usageError{err: err}
				}
				n, edges = vertices, g
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("gen graph: %w", err)
			}
			ePath := filepath.Join(out, "edges."+f.Ext())
			if err := gen.WriteEdges(ePath, f, edges); err != nil {
				return err
			}
			if err := gen.WriteVertices(filepath.Join(out, "vertices."+f.Ext()), f, gen.Vertices(n)); err != nil {
				os.Remove(ePath)
				return err
			}
			return nil
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "directory to write the files into, created if missing (required)")
	fl.Int64Var(&vertices, "vertices", 0, "number of vertices of the R-MAT graph, a power of two")
	fl.Int64Var(&nEdg, "edges", 0, "number of edges of the R-MAT graph")
	fl.StringVar(&grid, "grid", "", "write a W×H grid graph instead, e.g. 100x50")
	fl.Uint64Var(&seed, "seed", 1, "random seed")
	fl.StringVar(&format, "format", "text", "file format: text or parquet")
	fl.Float64Var(&a, "rmat-a", gen.DefaultA, "R-MAT probability of the top-left quadrant")
	fl.Float64Var(&b, "rmat-b", gen.DefaultB, "R-MAT probability of the top-right quadrant")
	fl.Float64Var(&c, "rmat-c", gen.DefaultC, "R-MAT probability of the bottom-left quadrant")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// parseGrid parses "WxH" with positive W and H.
func parseGrid(s string) (w, h int64, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	if ok {
		w, err = strconv.ParseInt(ws, 10, 64)
		if err == nil {
			h, err = strconv.ParseInt(hs, 10, 64)
		}
	}
	if !ok || err != nil || w < 1 || h < 1 || w > (1<<62)/h {
		return 0, 0, fmt.Errorf("--grid %q: want WxH with positive W and H, e.g. 100x50", s)
	}
	return w, h, nil
}

// newGenPointsCommand is `weir gen points`, which writes the input of k-means
// and of linear regression.
func newGenPointsCommand() *cobra.Command {
	var (
		out     string
		n       int64
		dims, k int
		kind    string
		seed    uint64
		noise   float64
	)
	cmd := &cobra.Command{
		Use:   "points --out DIR --n N --dims D [--kind kmeans|regression] [--k K] [--noise X] [--seed S]",
		Short: "Write points around random centres (k-means) or samples of a random linear model (regression)",
		Long: `Write DIR/points.txt, one point a line, its numbers separated by single spaces.

--kind kmeans (the default): N points in D dimensions around K centres drawn
uniformly from [-100, 100)^D, each point a centre chosen at random plus a normal
deviation of standard deviation 5 per coordinate. DIR/centroids.txt holds the
initial centroids of k-means, the first K points, as lines "id x1 ... xD" with
ids 1..K.

--kind regression: N samples "x1 ... xD y" of y = w·x + b plus a normal
deviation of standard deviation --noise, x uniform in [-1, 1)^D, w and b drawn
uniformly from [-10, 10). DIR/truth.txt holds the model as two lines,
"w w1 ... wD" and "b b".

The same seed gives the same files. Each file is written under a temporary
name and renamed when complete.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			fl := cmd.Flags()
			switch {
			case n < 0:
				return &usageError{err: fmt.Errorf("--n must not be negative, got %d", n)}
			case dims < 1:
				return &usageError{err: fmt.Errorf("--dims must be positive, got %d", dims)}
			case kind != "kmeans" && kind != "regression":
				return &usageError{err: fmt.Errorf("--kind %q: want kmeans or regression", kind)}
			case kind == "kmeans" && fl.Changed("noise"):
				return &usageError{err: fmt.Errorf("--noise is for --kind regression")}
			case kind == "regression" && fl.Changed("k"):
				return &usageError{err: fmt.Errorf("--k is for --kind kmeans")}
			case kind == "kmeans" && (k < 1 || int64(k) > n):
				return &usageError{err: fmt.Errorf("--k must be in [1, --n], got %d with --n %d", k, n)}
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("gen points: %w", err)
			}
			if kind == "regression" {
				return writeRegression(out, n, dims, seed, noise)
			}
			return writeKMeans(out, n, dims, k, seed)
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "directory to write the files into, created if missing (required)")
	fl.Int64Var(&n, "n", 0, "number of points (required)")
	fl.IntVar(&dims, "dims", 0, "dimensions of a point: coordinates, or features for regression (required)")
	fl.IntVar(&k, "k", 3, "number of centres and initial centroids (kmeans)")
	fl.StringVar(&kind, "kind", "kmeans", "kmeans or regression")
	fl.Float64Var(&noise, "noise", 0.1, "standard deviation of the noise added to y (regression)")
	fl.Uint64Var(&seed, "seed", 1, "random seed")
	_ = cmd.MarkFlagRequired("out")
	_ = cmd.MarkFlagRequired("n")
	_ = cmd.MarkFlagRequired("dims")
	return cmd
}

// writeKMeans writes points.txt and centroids.txt of `weir gen points --kind kmeans`.
func writeKMeans(dir string, n int64, dims, k int, seed uint64) error {
	_, points, err := gen.Points(n, dims, k, seed)
	if err != nil {
		return &usageError{err: err}
	}
	var first [][]float64
	for p := range points {
		if len(first) == k {
			break
		}
		first = append(first, p)
	}
	pPath := filepath.Join(dir, "points.txt")
	if err := gen.WriteFile(pPath, func(w io.Writer) error { return gen.WritePointsText(w, points) }); err != nil {
		return err
	}
	err = gen.WriteFile(filepath.Join(dir, "centroids.txt"), func(w io.Writer) error {
		return gen.WriteCentroidsText(w, first)
	})
	if err != nil {
		os.Remove(pPath)
	}
	return err
}

// writeRegression writes points.txt and truth.txt of `weir gen points --kind regression`.
func writeRegression(dir string, n int64, features int, seed uint64, noise float64) error {
	truth, samples, err := gen.Regression(n, features, seed, noise)
	if err != nil {
		return &usageError{err: err}
	}
	rows := func(yield func([]float64) bool) {
		for x, y := range samples {
			if !yield(append(x, y)) {
				return
			}
		}
	}
	pPath := filepath.Join(dir, "points.txt")
	if err := gen.WriteFile(pPath, func(w io.Writer) error { return gen.WritePointsText(w, rows) }); err != nil {
		return err
	}
	err = gen.WriteFile(filepath.Join(dir, "truth.txt"), func(w io.Writer) error {
		s := "w"
		for _, x := range truth.W {
			s += " " + strconv.FormatFloat(x, 'g', -1, 64)
		}
		_, err := fmt.Fprintf(w, "%s\nb %s\n", s, strconv.FormatFloat(truth.B, 'g', -1, 64))
		return err
	})
	if err != nil {
		os.Remove(pPath)
	}
	return err
}
