package oracle

import (
	"math"
	"slices"
	"testing"

	"github.com/weirdata/weir/internal/gen"
)

func TestKMeans(t *testing.T) {
	points := [][]float64{{0}, {1}, {10}, {11}}
	// step 1: 0 -> c1; 1, 10, 11 -> c2 = 22/3. step 2: 0, 1 -> c1 = 0.5;
	// 10, 11 -> c2 = 10.5. Step 3 changes nothing.
	cs, assign := KMeans(points, []Centroid{{2, []float64{1}}, {1, []float64{0}}}, 1)
	if len(cs) != 2 || cs[0].ID != 1 || cs[0].X[0] != 0 || cs[1].ID != 2 || math.Abs(cs[1].X[0]-22.0/3) > 1e-15 {
		t.Errorf("one step: %v", cs)
	}
	if !slices.Equal(assign, []int64{1, 1, 2, 2}) {
		t.Errorf("one step: assignment %v", assign)
	}
	cs, assign = KMeans(points, []Centroid{{1, []float64{0}}, {2, []float64{1}}}, 3)
	if len(cs) != 2 || cs[0].X[0] != 0.5 || cs[1].X[0] != 10.5 {
		t.Errorf("three steps: %v", cs)
	}
	if !slices.Equal(assign, []int64{1, 1, 2, 2}) {
		t.Errorf("three steps: assignment %v", assign)
	}
}

func TestKMeansTiesAndEmpty(t *testing.T) {
	// 5 is as far from 0 as from 10: the lower id wins whatever the order
	_, assign := KMeans([][]float64{{5, 0}}, []Centroid{{2, []float64{0, 0}}, {1, []float64{10, 0}}}, 0)
	if !slices.Equal(assign, []int64{1}) {
		t.Errorf("tie: assigned to %v, want 1", assign)
	}
	// centroid 2 gets no point and is dropped
	cs, assign := KMeans([][]float64{{0}, {1}}, []Centroid{{1, []float64{0}}, {2, []float64{100}}}, 1)
	if len(cs) != 1 || cs[0].ID != 1 || cs[0].X[0] != 0.5 || !slices.Equal(assign, []int64{1, 1}) {
		t.Errorf("empty cluster: %v, %v", cs, assign)
	}
}

// TestKMeansFindsGeneratedCentres starts from the generated centres moved a
// little and expects k-means to stay by them.
func TestKMeansFindsGeneratedCentres(t *testing.T) {
	centres, points, err := gen.Points(3000, 2, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	var start []Centroid
	for i, c := range centres {
		start = append(start, Centroid{int64(i + 1), []float64{c[0] + 3, c[1] - 3}})
	}
	cs, _ := KMeans(slices.Collect(points), start, 10)
	if len(cs) != 3 {
		t.Fatalf("%d centroids left", len(cs))
	}
	for i, c := range cs {
		if d := math.Hypot(c.X[0]-centres[i][0], c.X[1]-centres[i][1]); d > 1 {
			t.Errorf("centroid %d at %v, %.2f from its centre %v", c.ID, c.X, d, centres[i])
		}
	}
}
