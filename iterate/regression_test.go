package iterate

import (
	"math"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
)

// TestLinearRegression: gradient descent converges to the least-squares fit
// of the normal equations.
func TestLinearRegression(t *testing.T) {
	_, samples, err := gen.Regression(2000, 3, 17, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	var xs [][]float64
	var ys []float64
	var in []Sample
	for x, y := range samples {
		xs = append(xs, x)
		ys = append(ys, y)
		in = append(in, Sample{X: x, Y: y})
	}
	w, b := oracle.LeastSquares(xs, ys)
	// x is uniform in [-1, 1)^3: the second moments of (1, x) are about 1 and
	// 1/3, so step 1.5 shrinks every error by about half per step.
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			got := dataset.Collect(LinearRegression(dataset.FromSlice(env, in), 60, 1.5))
			execute(t, env)
			ms := got.Values()
			if len(ms) != 1 || len(ms[0].W) != 3 {
				t.Fatalf("models %v, want one with 3 weights", ms)
			}
			m := ms[0]
			if math.Abs(m.B-b) > 1e-6 {
				t.Errorf("b = %v, least squares %v", m.B, b)
			}
			for i := range w {
				if math.Abs(m.W[i]-w[i]) > 1e-6 {
					t.Errorf("w[%d] = %v, least squares %v", i, m.W[i], w[i])
				}
			}
		})
	}
}
