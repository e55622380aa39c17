package oracle

import (
	"math"
	"testing"

	"github.com/weirdata/weir/internal/gen"
)

func TestLeastSquaresExact(t *testing.T) {
	// y = 2 x1 - 3 x2 + 1
	xs := [][]float64{{0, 0}, {1, 0}, {0, 1}, {2, 5}, {-1, 3}}
	var ys []float64
	for _, x := range xs {
		ys = append(ys, 2*x[0]-3*x[1]+1)
	}
	w, b := LeastSquares(xs, ys)
	if math.Abs(w[0]-2) > 1e-12 || math.Abs(w[1]+3) > 1e-12 || math.Abs(b-1) > 1e-12 {
		t.Errorf("w = %v, b = %v, want [2 -3], 1", w, b)
	}
}

func TestLeastSquaresByHand(t *testing.T) {
	// (0,1), (1,3), (2,4): slope Sxy/Sxx = 3/2, intercept 8/3 - 3/2 = 7/6
	w, b := LeastSquares([][]float64{{0}, {1}, {2}}, []float64{1, 3, 4})
	if math.Abs(w[0]-1.5) > 1e-12 || math.Abs(b-7.0/6) > 1e-12 {
		t.Errorf("w = %v, b = %v, want 1.5, 7/6", w, b)
	}
}

func TestLeastSquaresGenerated(t *testing.T) {
	truth, samples, err := gen.Regression(20000, 5, 3, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	var xs [][]float64
	var ys []float64
	for x, y := range samples {
		xs = append(xs, x)
		ys = append(ys, y)
	}
	w, b := LeastSquares(xs, ys)
	// standard error of each coefficient is about 0.1 / sqrt(n/3) ≈ 0.0012
	for i := range w {
		if math.Abs(w[i]-truth.W[i]) > 0.01 {
			t.Errorf("w[%d] = %v, truth %v", i, w[i], truth.W[i])
		}
	}
	if math.Abs(b-truth.B) > 0.01 {
		t.Errorf("b = %v, truth %v", b, truth.B)
	}
}

func TestLeastSquaresSingular(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("constant feature: no panic")
		}
	}()
	LeastSquares([][]float64{{1}, {1}, {1}}, []float64{1, 2, 3})
}
