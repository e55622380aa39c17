package oracle

import (
	"fmt"
	"math"
)

// LeastSquares fits y ≈ w·x + b to the samples (xs[i], ys[i]) by ordinary
// least squares: it solves the normal equations (AᵀA) θ = Aᵀy for θ = (w, b),
// A being xs with a column of ones appended, by Cholesky decomposition in
// float64. It panics when AᵀA is not positive definite (fewer independent
// samples than features + 1, or a constant feature).
func LeastSquares(xs [][]float64, ys []float64) (w []float64, b float64) {
	if len(xs) != len(ys) || len(xs) == 0 {
		panic(fmt.Sprintf("oracle: least squares of %d x vectors and %d y values", len(xs), len(ys)))
	}
	d := len(xs[0]) + 1
	ata := make([][]float64, d)
	for i := range ata {
		ata[i] = make([]float64, d)
	}
	aty := make([]float64, d)
	row := make([]float64, d)
	for i, x := range xs {
		if len(x) != d-1 {
			panic(fmt.Sprintf("oracle: x %d has %d features, x 0 has %d", i, len(x), d-1))
		}
		copy(row, x)
		row[d-1] = 1
		for r := range d {
			for c := 0; c <= r; c++ {
				ata[r][c] += row[r] * row[c]
			}
			aty[r] += row[r] * ys[i]
		}
	}
	// Cholesky: ata = L Lᵀ, L lower triangular, in place in the lower half.
	l := ata
	for j := range d {
		s := l[j][j]
		for k := range j {
			s -= l[j][k] * l[j][k]
		}
		if !(s > 1e-12*ata[j][j]) {
			panic("oracle: least squares: the normal equations are singular")
		}
		l[j][j] = math.Sqrt(s)
		for i := j + 1; i < d; i++ {
			s := l[i][j]
			for k := range j {
				s -= l[i][k] * l[j][k]
			}
			l[i][j] = s / l[j][j]
		}
	}
	// L z = Aᵀy, then Lᵀ θ = z
	z := make([]float64, d)
	for i := range d {
		s := aty[i]
		for k := range i {
			s -= l[i][k] * z[k]
		}
		z[i] = s / l[i][i]
	}
	theta := make([]float64, d)
	for i := d - 1; i >= 0; i-- {
		s := z[i]
		for k := i + 1; k < d; k++ {
			s -= l[k][i] * theta[k]
		}
		theta[i] = s / l[i][i]
	}
	return theta[:d-1], theta[d-1]
}
