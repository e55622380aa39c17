// Package clusteredparquet writes the Parquet output of iterate's k-means:
// one row per point with the columns its text lines hold, cluster (INT64,
// the id of the point's final centroid) and x1 .. xd (DOUBLE, its
// coordinates). The sink takes its columns from a struct type, so there is
// one row type per dimension, up to MaxDims. Their instantiations of the
// sink compile here, apart from the algorithms: in package iterate they
// took 1 GB of its compile's 2.5 GB.
package clusteredparquet

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/lines"
)

// MaxDims is the largest dimension of points Emit writes.
const MaxDims = 8

// Point is a clustered point: its cluster and its coordinates.
type Point struct {
	Cluster int64
	X       []float64
}

// Emit writes points, each of d coordinates, in their order, to the
// Parquet file o.Output. A point of another dimension panics: the job
// has already refused it.
func Emit(ctx context.Context, env *dataset.Env, points *dataset.DataSet[Point], d int, o lines.Options) error {
	switch d {
	case 1:
		return emit[clustered1](ctx, env, points, d, o)
	case 2:
		return emit[clustered2](ctx, env, points, d, o)
	case 3:
		return emit[clustered3](ctx, env, points, d, o)
	case 4:
		return emit[clustered4](ctx, env, points, d, o)
	case 5:
		return emit[clustered5](ctx, env, points, d, o)
	case 6:
		return emit[clustered6](ctx, env, points, d, o)
	case 7:
		return emit[clustered7](ctx, env, points, d, o)
	case 8:
		return emit[clustered8](ctx, env, points, d, o)
	}
	return fmt.Errorf("Parquet output holds points of 1 to %d coordinates, these have %d: write text", MaxDims, d)
}

// row is a row type of the output: *R sets its cluster and coordinates.
type row[R any] interface {
	*R
	set(cluster int64, x []float64)
}

func emit[R any, P row[R]](ctx context.Context, env *dataset.Env, points *dataset.DataSet[Point], d int, o lines.Options) error {
	rows := dataset.Map(points, func(p Point) R {
		if len(p.X) != d {
			panic(fmt.Sprintf("iterate: kmeans: a point has %d coordinates, the centroids %d", len(p.X), d))
		}
		var r R
		P(&r).set(p.Cluster, p.X)
		return r
	})
	return lines.EmitParquet(ctx, env, rows, o)
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
