package iterate

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirdata/weir/dataset"
)

// The Parquet output of RunKMeans: one row per point, in the order of the
// text lines, with the columns those lines hold: cluster (INT64, the id of the
// point's final centroid) and x1 .. xd (DOUBLE, its coordinates). The sink
// takes its columns from a struct type, so there is one row type per
// dimension, up to maxParquetDims; the dimension is the initial centroids'
// (every point must have it: see nearest), read before the job starts.

// maxParquetDims is the largest dimension of points RunKMeans writes to
// Parquet.
const maxParquetDims = 8

// errFound stops the read of the centroids once the first one is found.
var errFound = errors.New("iterate: kmeans: found a centroid")

// centroidDims returns the number of coordinates of the first centroid of
// path ("" for KMeansCentroids): the dimension of every point of the job.
// A malformed first line is a *ParseError.
func centroidDims(ctx context.Context, path string) (int, error) {
	if path == "" {
		return len(KMeansCentroids[0].X), nil
	}
	src, err := openLines(path, parseCentroid)
	if err != nil {
		return 0, fmt.Errorf("centroids file: %w", err)
	}
	splits, err := src.Splits(ctx)
	if err != nil {
		return 0, fmt.Errorf("centroids file: %w", err)
	}
	for _, s := range splits {
		d := 0
		err := src.Read(ctx, s, func(b []Centroid) error {
			if len(b) == 0 {
				return nil
			}
			d = len(b[0].X)
			return errFound
		})
		if errors.Is(err, errFound) {
			return d, nil
		}
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				return 0, pe
			}
			return 0, fmt.Errorf("centroids file: %w", err)
		}
	}
	return 0, fmt.Errorf("centroids file: %s holds no centroid", path)
}

// emitClusteredParquet writes the clustered points of dimension d to the
// Parquet file o.Output.
func emitClusteredParquet(ctx context.Context, env *dataset.Env, clustered *dataset.DataSet[ClusteredPoint], d int, o Options) error {
	switch d {
	case 1:
		return emitClustered[clustered1](ctx, env, clustered, d, o)
	case 2:
		return emitClustered[clustered2](ctx, env, clustered, d, o)
	case 3:
		return emitClustered[clustered3](ctx, env, clustered, d, o)
	case 4:
		return emitClustered[clustered4](ctx, env, clustered, d, o)
	case 5:
		return emitClustered[clustered5](ctx, env, clustered, d, o)
	case 6:
		return emitClustered[clustered6](ctx, env, clustered, d, o)
	case 7:
		return emitClustered[clustered7](ctx, env, clustered, d, o)
	case 8:
		return emitClustered[clustered8](ctx, env, clustered, d, o)
	}
	return fmt.Errorf("Parquet output holds points of 1 to %d coordinates, these have %d: write text", maxParquetDims, d)
}

// clusteredRow is a row type of the Parquet output: *R sets its cluster and
// coordinates.
type clusteredRow[R any] interface {
	*R
	set(cluster int64, x []float64)
}

// emitClustered writes the clustered points, of d coordinates each, as rows
// of R sorted by their text line. A point of another dimension panics: the
// job's nearest has already refused it.
func emitClustered[R any, P clusteredRow[R]](ctx context.Context, env *dataset.Env, clustered *dataset.DataSet[ClusteredPoint], d int, o Options) error {
	type keyed = dataset.KV[string, R]
	rows := dataset.Map(clustered, func(p ClusteredPoint) keyed {
		if len(p.X) != d {
			panic(fmt.Sprintf("iterate: kmeans: a point has %d coordinates, the centroids %d", len(p.X), d))
		}
		var r R
		P(&r).set(p.Centroid, p.X)
		return keyed{Key: formatPoint(p.Centroid, p.X), Value: r}
	})
	sorted := dataset.Sort(rows, func(k keyed) string { return k.Key }, dataset.Ascending)
	return emitParquet(ctx, env, dataset.Map(sorted, func(k keyed) R { return k.Value }), o)
}

type clustered1 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
}

func (r *clustered1) set(c int64, x []float64) { r.Cluster, r.X1 = c, x[0] }

type clustered2 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
}

func (r *clustered2) set(c int64, x []float64) { r.Cluster, r.X1, r.X2 = c, x[0], x[1] }

type clustered3 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
}

func (r *clustered3) set(c int64, x []float64) { r.Cluster, r.X1, r.X2, r.X3 = c, x[0], x[1], x[2] }

type clustered4 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
	X4      float64 `weir:"x4"`
}

func (r *clustered4) set(c int64, x []float64) {
	r.Cluster, r.X1, r.X2, r.X3, r.X4 = c, x[0], x[1], x[2], x[3]
}

type clustered5 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
	X4      float64 `weir:"x4"`
	X5      float64 `weir:"x5"`
}

func (r *clustered5) set(c int64, x []float64) {
	r.Cluster, r.X1, r.X2, r.X3, r.X4, r.X5 = c, x[0], x[1], x[2], x[3], x[4]
}

type clustered6 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
	X4      float64 `weir:"x4"`
	X5      float64 `weir:"x5"`
	X6      float64 `weir:"x6"`
}

func (r *clustered6) set(c int64, x []float64) {
	r.Cluster, r.X1, r.X2, r.X3, r.X4, r.X5, r.X6 = c, x[0], x[1], x[2], x[3], x[4], x[5]
}

type clustered7 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
	X4      float64 `weir:"x4"`
	X5      float64 `weir:"x5"`
	X6      float64 `weir:"x6"`
	X7      float64 `weir:"x7"`
}

func (r *clustered7) set(c int64, x []float64) {
	r.Cluster, r.X1, r.X2, r.X3, r.X4, r.X5, r.X6, r.X7 = c, x[0], x[1], x[2], x[3], x[4], x[5], x[6]
}

type clustered8 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
	X4      float64 `weir:"x4"`
	X5      float64 `weir:"x5"`
	X6      float64 `weir:"x6"`
	X7      float64 `weir:"x7"`
	X8      float64 `weir:"x8"`
}

func (r *clustered8) set(c int64, x []float64) {
	r.Cluster, r.X1, r.X2, r.X3, r.X4, r.X5, r.X6, r.X7, r.X8 = c, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
}
