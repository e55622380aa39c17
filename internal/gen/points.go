package gen

import (
	"fmt"
	"iter"
	"math/rand/v2"
)

// Points returns n points in dims dimensions scattered around k centres, the
// input of k-means: the centres are drawn uniformly from [-100, 100)^dims, and
// each point picks a centre uniformly at random and adds to each of its
// coordinates a normal deviation of standard deviation 5. It returns the
// centres and the points; the same seed gives the same centres and points,
// and every range over points gives the same sequence. Each yielded slice is
// freshly allocated and may be kept.
func Points(n int64, dims, k int, seed uint64) (centres [][]float64, points iter.Seq[[]float64], err error) {
	if n < 0 {
		return nil, nil, fmt.Errorf("gen: points: n must not be negative, got %d", n)
	}
	if dims < 1 {
		return nil, nil, fmt.Errorf("gen: points: dims must be positive, got %d", dims)
	}
	if k < 1 {
		return nil, nil, fmt.Errorf("gen: points: k must be positive, got %d", k)
	}
	r := rand.New(rand.NewPCG(seed, 0x63656e747265)) // "centre"
	centres = make([][]float64, k)
	for i := range centres {
		centres[i] = make([]float64, dims)
		for j := range centres[i] {
			centres[i][j] = r.Float64()*200 - 100
		}
	}
	points = func(yield func([]float64) bool) {
		r := rand.New(rand.NewPCG(seed, 0x706f696e74)) // "point"
		for range n {
			c := centres[r.IntN(k)]
			p := make([]float64, dims)
			for j := range p {
				p[j] = c[j] + 5*r.NormFloat64()
			}
			if !yield(p) {
				return
			}
		}
	}
	return centres, points, nil
}

// Model is a linear model y = W·x + B.
type Model struct {
	W []float64
	B float64
}

// Predict returns W·x + B.
func (m Model) Predict(x []float64) float64 {
	y := m.B
	for i, w := range m.W {
		y += w * x[i]
	}
	return y
}

// Regression returns a linear model with features weights and an intercept,
// each drawn uniformly from [-10, 10), and n samples (x, y) of it: x uniform in
// [-1, 1)^features and y = truth.Predict(x) + a normal deviation of standard
// deviation noise (noise 0 gives exact y). The same seed gives the same model
// and samples, and every range over samples gives the same sequence. Each
// yielded x is freshly allocated and may be kept.
func Regression(n int64, features int, seed uint64, noise float64) (truth Model, samples iter.Seq2[[]float64, float64], err error) {
	if n < 0 {
		return Model{}, nil, fmt.Errorf("gen: regression: n must not be negative, got %d", n)
	}
	if features < 1 {
		return Model{}, nil, fmt.Errorf("gen: regression: features must be positive, got %d", features)
	}
	if !(noise >= 0) {
		return Model{}, nil, fmt.Errorf("gen: regression: noise must not be negative, got %g", noise)
	}
	r := rand.New(rand.NewPCG(seed, 0x6d6f64656c)) // "model"
	truth.W = make([]float64, features)
	for i := range truth.W {
		truth.W[i] = r.Float64()*20 - 10
	}
	truth.B = r.Float64()*20 - 10
	samples = func(yield func([]float64, float64) bool) {
		r := rand.New(rand.NewPCG(seed, 0x73616d706c65)) // "sample"
		for range n {
			x := make([]float64, features)
			for j := range x {
				x[j] = r.Float64()*2 - 1
			}
			y := truth.Predict(x)
			if noise > 0 {
				y += noise * r.NormFloat64()
			}
			if !yield(x, y) {
				return
			}
		}
	}
	return truth, samples, nil
}
