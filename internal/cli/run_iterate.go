package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/examples"
	"github.com/weirdata/weir/iterate"
)

// The iteration jobs of weir run and weir explain (package iterate).

// printSupersteps writes what every superstep of the job's iterations did:
// the records of the next partial solution or workset, the delta merged into
// the solution set, and the time.
func printSupersteps(w io.Writer, res *dataset.Result) {
	for _, it := range res.Iterations {
		fmt.Fprintf(w, "%s: %d supersteps\n", it.Name, len(it.Supersteps))
		delta := strings.HasPrefix(it.Name, "IterateDelta")
		for _, s := range it.Supersteps {
			if delta {
				fmt.Fprintf(w, "  superstep %4d  workset %10d  delta %10d  %v\n", s.Superstep, s.Records, s.Delta, s.Time.Round(10*time.Microsecond))
			} else {
				fmt.Fprintf(w, "  superstep %4d  records %10d  %v\n", s.Superstep, s.Records, s.Time.Round(10*time.Microsecond))
			}
		}
	}
}

func pageRankJob() *job {
	return &job{
		name:      "pagerank",
		args:      "[--pages FILE] [--links FILE] [--iterations N] [--epsilon E] [--output FILE]",
		short:     "Rank pages by their links (Flink's PageRank, a scatter-gather graph iteration)",
		iterative: true,
		long: `Run Flink's PageRank as a scatter-gather iteration over the links' adjacency
arrays: every superstep sends each page's rank along its out-links, divided by its
out-degree, and damps the sums with 0.85: rank' = 0.15/N + 0.85 * sum. Every page
keeps a rank (0.15/N without in-links); a page without out-links passes its rank
to no one; a link to or from an id that is not a page is left out. The iteration
stops after --iterations supersteps, or after the first one in which no rank
changed by more than --epsilon (negative: never).

  --pages  page ids, one a line, or a Parquet file with an INT64 column id
  --links  "src dst" lines, or a Parquet file with INT64 columns src and dst

Both default to Flink's PageRankData (15 pages). Prints "id rank" lines sorted by id;
an --output name ending in .parquet gets Parquet instead: columns id (INT64) and
rank (DOUBLE), in the same order.`,
		bind: func(f *pflag.FlagSet) program {
			var in iterate.PageRankInputs
			p := iterate.PageRankParams{}
			f.StringVar(&in.Pages, "pages", "", "page ids (default: Flink's PageRankData)")
			f.StringVar(&in.Links, "links", "", "links between pages (default: Flink's PageRankData)")
			f.Float64Var(&p.Epsilon, "epsilon", 1e-4, "stop once no rank changes by more than this in a superstep (negative: never)")
			lf := bindLoop(f, 10, "greatest number of supersteps", "the ranks")
			return func(ctx context.Context, o examples.Options) error {
				if err := lf.apply(&o); err != nil {
					return err
				}
				p.Iterations = lf.iterations
				return iterate.RunPageRank(ctx, o, in, p)
			}
		},
	}
}

func componentsJob() *job {
	return &job{
		name:      "connected-components",
		args:      "[--vertices FILE] [--edges FILE] [--iterations N] [--output FILE]",
		short:     "Find the connected components of a graph (Flink's ConnectedComponents, a scatter-gather graph iteration)",
		iterative: true,
		long: `Run Flink's ConnectedComponents as a scatter-gather iteration over the edges'
adjacency arrays: every vertex starts in a component of its own, named by its id;
every superstep, the vertices whose component changed send it to their neighbours
(edges count in both directions), and a vertex takes the smallest id it hears of.
It stops when no component changes, or after --iterations supersteps.

  --vertices  vertex ids, one a line, or a Parquet file with an INT64 column id
              (default: the endpoints of --edges)
  --edges     "src dst" lines, or a Parquet file with INT64 columns src and dst

Without --edges, Flink's ConnectedComponentsData. Prints "vertex component" lines
sorted by vertex; an --output name ending in .parquet gets Parquet instead: INT64
columns vertex and component, in the same order.`,
		bind: func(f *pflag.FlagSet) program {
			var in iterate.GraphInputs
			f.StringVar(&in.Vertices, "vertices", "", "vertex ids (default: the edges' endpoints, or Flink's data)")
			f.StringVar(&in.Edges, "edges", "", "edges of the graph (default: Flink's ConnectedComponentsData)")
			lf := bindLoop(f, 1000, "greatest number of supersteps", "the components")
			return func(ctx context.Context, o examples.Options) error {
				if err := lf.apply(&o); err != nil {
					return err
				}
				return iterate.RunConnectedComponents(ctx, o, in, lf.iterations)
			}
		},
	}
}

func shortestPathsJob() *job {
	return &job{
		name:      "sssp",
		args:      "[--edges FILE] [--source ID] [--iterations N] [--output FILE]",
		short:     "Single-source shortest paths in a weighted graph (a vertex-centric iteration)",
		iterative: true,
		long: `Compute the length of the shortest directed path from --source to every vertex
it reaches, as a vertex-centric iteration over adjacency arrays (Gelly's
SingleSourceShortestPaths): every superstep relaxes the out-edges of the
vertices whose distance fell in the one before. It stops when no distance falls,
or after --iterations rounds of relaxation.

  --edges  "src dst weight" lines (default: a small built-in graph, source 1)

Prints "vertex distance" lines sorted by vertex; unreachable vertices are left out.
An --output name ending in .parquet gets Parquet instead: columns vertex (INT64)
and distance (DOUBLE), in the same order.`,
		bind: func(f *pflag.FlagSet) program {
			var edges string
			var source int64
			f.StringVar(&edges, "edges", "", "weighted edges (default: built-in)")
			f.Int64Var(&source, "source", 1, "the vertex the paths start from")
			lf := bindLoop(f, 1000, "greatest number of supersteps", "the distances")
			return func(ctx context.Context, o examples.Options) error {
				if err := lf.apply(&o); err != nil {
					return err
				}
				return iterate.RunShortestPaths(ctx, o, edges, source, lf.iterations)
			}
		},
	}
}

func kMeansJob() *job {
	return &job{
		name:      "kmeans",
		args:      "[--points FILE] [--centroids FILE] [--iterations N] [--output FILE]",
		short:     "Cluster points with k-means (Flink's KMeans, a bulk iteration)",
		iterative: true,
		long: `Run Flink's KMeans (Lloyd's algorithm) as a bulk iteration over the centroids:
every superstep assigns every point to its nearest centroid (Euclidean; ties to
the lowest id; the centroids are broadcast) and moves each centroid to the mean of
its points; a centroid no point chose is dropped. Runs --iterations supersteps.

  --points     "x1 .. xd" lines
  --centroids  "id x1 .. xd" lines, the initial centroids

Both default to built-in 2-D data with four centroids. Prints, as Flink's example
does, every point with its final cluster as "centroidId x1 .. xd" lines, sorted.
An --output name ending in .parquet gets Parquet instead: columns cluster (INT64)
and x1 .. xd (DOUBLE), in the same order, for points of up to 8 dimensions.`,
		bind: func(f *pflag.FlagSet) program {
			var in iterate.KMeansInputs
			f.StringVar(&in.Points, "points", "", "points to cluster (default: built-in)")
			f.StringVar(&in.Centroids, "centroids", "", "initial centroids (default: built-in)")
			lf := bindLoop(f, 10, "number of supersteps", "the clustered points")
			return func(ctx context.Context, o examples.Options) error {
				if err := lf.apply(&o); err != nil {
					return err
				}
				return iterate.RunKMeans(ctx, o, in, lf.iterations)
			}
		},
	}
}

func regressionJob() *job {
	return &job{
		name:      "linear-regression",
		args:      "[--input FILE] [--iterations N] [--step S] [--output FILE]",
		short:     "Fit a linear model by batch gradient descent (Flink's LinearRegression, a bulk iteration)",
		iterative: true,
		long: `Run Flink's LinearRegression as a bulk iteration: starting from the zero model,
every superstep computes the mean gradient of the squared loss over all samples
(the model is broadcast) and moves the model by --step times it. Runs --iterations
supersteps; the step must be small enough for the data (Flink's 0.01 is safe for
features of order 10).

  --input  "x1 .. xd y" lines: d features and the target (default: part of Flink's
           LinearRegressionData, y ≈ 2x)

Prints the model as one line "b w1 .. wd": y = b + w1 x1 + ... + wd xd. An --output
name ending in .parquet gets Parquet instead: one row per coefficient, in that order,
with columns name (STRING: b, w1, ..) and value (DOUBLE).`,
		bind: func(f *pflag.FlagSet) program {
			var input string
			var step float64
			f.StringVar(&input, "input", "", "samples (default: built-in)")
			f.Float64Var(&step, "step", 0.01, "gradient descent step size")
			lf := bindLoop(f, 10, "number of supersteps", "the model")
			return func(ctx context.Context, o examples.Options) error {
				if !(step > 0) {
					return &usageError{err: fmt.Errorf("--step must be positive, got %g", step)}
				}
				if err := lf.apply(&o); err != nil {
					return err
				}
				return iterate.RunLinearRegression(ctx, o, input, lf.iterations, step)
			}
		},
	}
}

func closureJob() *job {
	return &job{
		name:      "transitive-closure",
		args:      "[--edges FILE] [--iterations N] [--output FILE]",
		short:     "All pairs connected by a directed path (Flink's TransitiveClosureNaive, as a delta iteration)",
		iterative: true,
		long: `Compute every pair (src, dst) that a directed path of one or more edges connects,
as a delta iteration over the pairs: every superstep extends the paths found in
the one before by one edge and keeps those not found yet. It stops when no new
pair is found, or after --iterations supersteps.

  --edges  "src dst" lines, or a Parquet file with INT64 columns src and dst
           (default: Flink's ConnectedComponentsData, as Flink's example)

Prints "src dst" lines sorted; an --output name ending in .parquet gets Parquet
instead: INT64 columns src and dst, in the same order.`,
		bind: func(f *pflag.FlagSet) program {
			var edges string
			f.StringVar(&edges, "edges", "", "edges of the graph (default: Flink's ConnectedComponentsData)")
			lf := bindLoop(f, 1000, "greatest number of supersteps", "the pairs")
			return func(ctx context.Context, o examples.Options) error {
				if err := lf.apply(&o); err != nil {
					return err
				}
				return iterate.RunTransitiveClosure(ctx, o, edges, lf.iterations)
			}
		},
	}
}

// loopFlags are the flags every iteration job has: --iterations and --output.
type loopFlags struct {
	iterations int
	output     *string
}

// bindLoop registers --iterations (def supersteps; usage says what they are)
// and --output (a file for what, Parquet if its name ends in .parquet).
func bindLoop(f *pflag.FlagSet, def int, usage, what string) *loopFlags {
	lf := &loopFlags{}
	f.IntVar(&lf.iterations, "iterations", def, usage)
	lf.output = outputFlag(f, "file to write "+what+" to, Parquet if it ends in .parquet (default: stdout)")
	return lf
}

// apply checks --iterations and sets o's output.
func (lf *loopFlags) apply(o *examples.Options) error {
	if lf.iterations < 1 {
		return &usageError{err: fmt.Errorf("--iterations must be positive, got %d", lf.iterations)}
	}
	o.Output = *lf.output
	return nil
}
