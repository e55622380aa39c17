package iterate

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/iterate/internal/clusteredparquet"
)

// The Parquet output of RunKMeans: one row per point, in the order of the
// text lines, with the columns those lines hold (package
// clusteredparquet); the dimension is the initial centroids' (every point
// must have it: see nearest), read before the job starts.

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
// Parquet file o.Output, sorted by their text line.
func emitClusteredParquet(ctx context.Context, env *dataset.Env, clustered *dataset.DataSet[ClusteredPoint], d int, o Options) error {
	if d < 1 || d > clusteredparquet.MaxDims {
		return fmt.Errorf("Parquet output holds points of 1 to %d coordinates, these have %d: write text", clusteredparquet.MaxDims, d)
	}
	type keyed = dataset.KV[string, clusteredparquet.Point]
	rows := dataset.Map(clustered, func(p ClusteredPoint) keyed {
		return keyed{Key: formatPoint(p.Centroid, p.X), Value: clusteredparquet.Point{Cluster: p.Centroid, X: p.X}}
	})
	sorted := dataset.Sort(rows, func(k keyed) string { return k.Key }, dataset.Ascending)
	return clusteredparquet.Emit(ctx, env, dataset.Map(sorted, func(k keyed) clusteredparquet.Point { return k.Value }), d, o)
}
