package iterate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
)

// Point is a point in d dimensions.
type Point struct {
	X []float64
}

// Centroid is a cluster centre with its id.
type Centroid struct {
	ID int64
	X  []float64
}

// ClusteredPoint is a point with the id of its nearest centroid.
type ClusteredPoint struct {
	Centroid int64
	X        []float64
}

// pointSum is the sum of N points.
type pointSum struct {
	Sum []float64
	N   int64
}

// add adds the coordinates x, a sum of count points, to s, making its sum the
// first time.
func (s *pointSum) add(x []float64, count int64) {
	if s.Sum == nil {
		s.Sum = make([]float64, len(x))
	}
	for i, v := range x {
		s.Sum[i] += v
	}
	s.N += count
}

// KMeansInputs name the inputs of RunKMeans; "" means the default data.
type KMeansInputs struct {
	Points    string // "x1 .. xd" lines
	Centroids string // "id x1 .. xd" lines
}

// KMeans is Flink's KMeans example (Lloyd's algorithm) as a bulk iteration
// over the centroids: every superstep assigns every point (a loop-invariant
// input, kept by the fold) to its nearest centroid (the centroids reach every
// subtask as a broadcast set) and sums the points per centroid, both in one
// fold per subtask (dataset.FoldWithBroadcast: a point is added to its
// centroid's sum as it is read; the subtasks' sums are then merged), and
// moves every centroid to the mean of its points. Distances are Euclidean,
// ties go to the lowest centroid id, and a centroid no point chose is dropped,
// as in Flink's example. It returns the final centroids and every point with
// its nearest final centroid (Flink's output).
//
//	centroids ─► Iterate: points ─► nearest centroid (broadcast) ─► sum per centroid ─► mean
//	points ─► nearest final centroid (broadcast) ─► clustered points
func KMeans(points *dataset.DataSet[Point], centroids *dataset.DataSet[Centroid], iterations int) (*dataset.DataSet[Centroid], *dataset.DataSet[ClusteredPoint]) {
	final := dataset.Iterate(centroids, iterations, func(_ *dataset.Iteration, cs *dataset.DataSet[Centroid]) *dataset.DataSet[Centroid] {
		sums := dataset.FoldWithBroadcast(points, cs,
			func(p Point, cs []Centroid) int64 { return nearest(p.X, cs) },
			func(s *pointSum, p Point, _ []Centroid) { s.add(p.X, 1) },
			func(s *pointSum, o pointSum) { s.add(o.Sum, o.N) })
		return dataset.Map(sums, func(s dataset.KV[int64, pointSum]) Centroid {
			x := make([]float64, len(s.Value.Sum))
			for i := range x {
				x[i] = s.Value.Sum[i] / float64(s.Value.N)
			}
			return Centroid{ID: s.Key, X: x}
		})
	})
	clustered := dataset.MapWithBroadcast(points, final, func(p Point, cs []Centroid) ClusteredPoint {
		return ClusteredPoint{Centroid: nearest(p.X, cs), X: p.X}
	})
	return final, clustered
}

// nearest returns the id of the centroid nearest to x, the lowest id on ties.
// It panics when cs is empty or a centroid's dimension is not x's.
func nearest(x []float64, cs []Centroid) int64 {
	if len(cs) == 0 {
		panic("iterate: kmeans: no centroids")
	}
	best, bd := int64(0), -1.0
	for _, c := range cs {
		if len(c.X) != len(x) {
			panic(fmt.Sprintf("iterate: kmeans: a point has %d coordinates, centroid %d has %d", len(x), c.ID, len(c.X)))
		}
		cx, d := c.X[:len(x)], 0.0
		for j, v := range x {
			d += (v - cx[j]) * (v - cx[j])
		}
		if bd < 0 || d < bd || d == bd && c.ID < best {
			best, bd = c.ID, d
		}
	}
	return best
}

// parsePoint reads "x1 .. xd".
func parsePoint(line []byte) (Point, error) {
	xs, err := parseFloats(line)
	if err != nil {
		return Point{}, fmt.Errorf("coordinate %w", err)
	}
	if len(xs) == 0 {
		return Point{}, fmt.Errorf("%q: want coordinates separated by spaces", line)
	}
	return Point{X: xs}, nil
}

// parseCentroid reads "id x1 .. xd".
func parseCentroid(line []byte) (Centroid, error) {
	f, rest, ok := nextField(line)
	if !ok {
		return Centroid{}, fmt.Errorf("%q: want an id and coordinates separated by spaces", line)
	}
	id, err := atoi64(f)
	if err != nil {
		return Centroid{}, fmt.Errorf("id %q: %w", f, err)
	}
	p, err := parsePoint(rest)
	if err != nil {
		return Centroid{}, err
	}
	return Centroid{ID: id, X: p.X}, nil
}

// formatPoint writes id and the coordinates separated by spaces.
func formatPoint(id int64, x []float64) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(id, 10))
	for _, v := range x {
		b.WriteByte(' ')
		b.WriteString(formatFloat(v))
	}
	return b.String()
}

// RunKMeans runs KMeans on in (default: KMeansPoints and KMeansCentroids) and
// writes, as Flink's example does, every point with its final cluster as
// "centroidId x1 .. xd" lines, sorted; or, to a Parquet o.Output, the rows of
// those lines in their order with columns cluster (INT64) and x1 .. xd
// (DOUBLE), for d up to 8, the first centroid's dimension, read before the
// job starts.
func RunKMeans(ctx context.Context, o Options, in KMeansInputs, iterations int) error {
	env := dataset.New(o.Dataset)
	var points *dataset.DataSet[Point]
	var centroids *dataset.DataSet[Centroid]
	var err error
	dims := 0
	if isParquet(o.Output) {
		if dims, err = centroidDims(ctx, in.Centroids); err != nil {
			return fmt.Errorf("iterate: kmeans: %w", err)
		}
	}
	if in.Points == "" {
		points = dataset.FromSlice(env, KMeansPoints)
	} else if points, err = readLines(env, "points", in.Points, parsePoint); err != nil {
		return fmt.Errorf("iterate: kmeans: points file: %w", err)
	}
	if in.Centroids == "" {
		centroids = dataset.FromSlice(env, KMeansCentroids)
	} else if centroids, err = readLines(env, "centroids", in.Centroids, parseCentroid); err != nil {
		return fmt.Errorf("iterate: kmeans: centroids file: %w", err)
	}
	_, clustered := KMeans(points, centroids, iterations)
	if dims > 0 {
		if err := emitClusteredParquet(ctx, env, clustered, dims, o); err != nil {
			return fmt.Errorf("iterate: kmeans: %w", err)
		}
		return nil
	}
	lines := dataset.Map(clustered, func(p ClusteredPoint) string { return formatPoint(p.Centroid, p.X) })
	if err := emit(ctx, env, dataset.Sort(lines, dataset.Self[string](), dataset.Ascending), o); err != nil {
		return fmt.Errorf("iterate: kmeans: %w", err)
	}
	return nil
}
