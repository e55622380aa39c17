package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/iterate"
)

// weir's linear regression and k-means on the hand loops' data (see
// iterate_ml_test.go), at parallelism 2, with unlimited memory, reported as
// the graph jobs are (reportSupersteps): ms/superstep after the first,
// first-ms for the first, which also reads the loop-invariant samples or
// points.

func BenchmarkWeirRegression(b *testing.B) {
	data := benchRegression(b)
	samples := make([]iterate.Sample, len(data.y))
	for i := range samples {
		samples[i] = iterate.Sample{X: data.x[i*data.d : (i+1)*data.d], Y: data.y[i]}
	}
	b.Run(fmt.Sprintf("n%d", len(samples)), func(b *testing.B) {
		var steps []dataset.SuperstepStats
		for b.Loop() {
			env := dataset.New(dataset.Options{Parallelism: handWorkers})
			models := dataset.Collect(iterate.LinearRegression(dataset.FromSlice(env, samples), mlIterations, mlStep))
			r, err := env.Execute(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if ms := models.Values(); len(ms) != 1 || len(ms[0].W) != mlFeatures {
				b.Fatalf("models %v, want one of %d weights", ms, mlFeatures)
			}
			steps = r.Iterations[0].Supersteps
		}
		reportSupersteps(b, steps)
	})
}

func BenchmarkWeirKMeans(b *testing.B) {
	data := benchKMeans(b)
	points := make([]iterate.Point, len(data.x)/data.d)
	for i := range points {
		points[i] = iterate.Point{X: data.x[i*data.d : (i+1)*data.d]}
	}
	centroids := make([]iterate.Centroid, len(data.centroids))
	for i, c := range data.centroids {
		centroids[i] = iterate.Centroid{ID: c.ID, X: c.X}
	}
	b.Run(fmt.Sprintf("n%d", len(points)), func(b *testing.B) {
		var steps []dataset.SuperstepStats
		for b.Loop() {
			env := dataset.New(dataset.Options{Parallelism: handWorkers})
			final, _ := iterate.KMeans(dataset.FromSlice(env, points), dataset.FromSlice(env, centroids), mlIterations)
			cs := dataset.Collect(final)
			r, err := env.Execute(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if len(cs.Values()) == 0 {
				b.Fatal("no centroids")
			}
			steps = r.Iterations[0].Supersteps
		}
		reportSupersteps(b, steps)
	})
}
