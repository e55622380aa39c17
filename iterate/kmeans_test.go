package iterate

import (
	"math"
	"slices"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
)

// TestKMeans: from the same initial centroids, the final centroids and every
// point's cluster equal Lloyd's algorithm's in the oracle.
func TestKMeans(t *testing.T) {
	_, pts, err := gen.Points(1500, 2, 4, 21)
	if err != nil {
		t.Fatal(err)
	}
	xs := slices.Collect(pts)
	points := make([]Point, len(xs))
	for i, x := range xs {
		points[i] = Point{X: x}
	}
	var start []Centroid
	var ostart []oracle.Centroid
	for i := range 5 { // five centroids for four clusters: one may be dropped
		start = append(start, Centroid{ID: int64(10 - i), X: xs[i]})
		ostart = append(ostart, oracle.Centroid{ID: int64(10 - i), X: xs[i]})
	}
	const iterations = 8
	wantCs, wantIDs := oracle.KMeans(xs, ostart, iterations)
	want := make([]string, len(xs))
	for i, x := range xs {
		want[i] = formatPoint(wantIDs[i], x)
	}
	slices.Sort(want)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			final, clustered := KMeans(dataset.FromSlice(env, points), dataset.FromSlice(env, start), iterations)
			gotCs, gotPs := dataset.Collect(final), dataset.Collect(clustered)
			execute(t, env)
			cs := gotCs.Values()
			slices.SortFunc(cs, func(a, b Centroid) int { return int(a.ID - b.ID) })
			if len(cs) != len(wantCs) {
				t.Fatalf("%d centroids, the oracle's %d", len(cs), len(wantCs))
			}
			for i, c := range cs {
				if c.ID != wantCs[i].ID || math.Abs(c.X[0]-wantCs[i].X[0]) > 1e-9 || math.Abs(c.X[1]-wantCs[i].X[1]) > 1e-9 {
					t.Fatalf("centroid %d at %v, the oracle's %d at %v", c.ID, c.X, wantCs[i].ID, wantCs[i].X)
				}
			}
			var got []string
			for _, p := range gotPs.Values() {
				got = append(got, formatPoint(p.Centroid, p.X))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("the points' clusters differ from the oracle's")
			}
		})
	}
}
