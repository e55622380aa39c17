package gen

import (
	"math"
	"slices"
	"testing"
)

func TestPoints(t *testing.T) {
	const n, dims, k = 20000, 3, 4
	centres, points, err := Points(n, dims, k, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(centres) != k {
		t.Fatalf("%d centres, want %d", len(centres), k)
	}
	all := slices.Collect(points)
	if len(all) != n {
		t.Fatalf("%d points, want %d", len(all), n)
	}
	if again := slices.Collect(points); !slices.EqualFunc(all, again, slices.Equal) {
		t.Error("a second range gave other points")
	}
	c2, p2, _ := Points(n, dims, k, 5)
	if !slices.EqualFunc(centres, c2, slices.Equal) || !slices.EqualFunc(all, slices.Collect(p2), slices.Equal) {
		t.Error("the same seed gave other centres or points")
	}
	// The centres are far apart compared with the spread (σ = 5), so each
	// point's nearest centre is the one it was drawn around; per centre, the
	// mean of its points is within a few standard errors of it, and the
	// spread per coordinate is 5.
	sum := make([][]float64, k)
	sq := make([][]float64, k)
	cnt := make([]int, k)
	for i := range sum {
		sum[i], sq[i] = make([]float64, dims), make([]float64, dims)
	}
	for _, p := range all {
		if len(p) != dims {
			t.Fatalf("point %v has %d coordinates", p, len(p))
		}
		best, bd := 0, math.Inf(1)
		for i, c := range centres {
			d := 0.0
			for j := range p {
				d += (p[j] - c[j]) * (p[j] - c[j])
			}
			if d < bd {
				best, bd = i, d
			}
		}
		cnt[best]++
		for j := range p {
			dev := p[j] - centres[best][j]
			sum[best][j] += dev
			sq[best][j] += dev * dev
		}
	}
	for i := range k {
		if cnt[i] < n/k/2 {
			t.Errorf("centre %d has %d points, want about %d", i, cnt[i], n/k)
			continue
		}
		for j := range dims {
			mean := sum[i][j] / float64(cnt[i])
			sd := math.Sqrt(sq[i][j] / float64(cnt[i]))
			if math.Abs(mean) > 6*5/math.Sqrt(float64(cnt[i])) {
				t.Errorf("centre %d coordinate %d: mean deviation %.3f", i, j, mean)
			}
			if math.Abs(sd-5) > 0.3 {
				t.Errorf("centre %d coordinate %d: spread %.3f, want 5", i, j, sd)
			}
		}
	}
	for _, bad := range [][3]int{{-1, 2, 2}, {10, 0, 2}, {10, 2, 0}} {
		if _, _, err := Points(int64(bad[0]), bad[1], bad[2], 1); err == nil {
			t.Errorf("Points(%v): no error", bad)
		}
	}
}

func TestRegression(t *testing.T) {
	const n, features = 5000, 4
	truth, samples, err := Regression(n, features, 9, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(truth.W) != features {
		t.Fatalf("%d weights, want %d", len(truth.W), features)
	}
	count := 0
	for x, y := range samples {
		count++
		want := truth.B
		for j := range x {
			if x[j] < -1 || x[j] >= 1 {
				t.Fatalf("x %v outside [-1, 1)", x)
			}
			want += truth.W[j] * x[j]
		}
		if y != want {
			t.Fatalf("noise 0: y = %v, want w·x+b = %v", y, want)
		}
	}
	if count != n {
		t.Fatalf("%d samples, want %d", count, n)
	}
	// with noise σ, the residuals have mean 0 and standard deviation σ
	truth2, noisy, err := Regression(n, features, 9, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(truth.W, truth2.W) || truth.B != truth2.B {
		t.Error("the noise changed the model")
	}
	var s, ss float64
	for x, y := range noisy {
		r := y - truth.Predict(x)
		s += r
		ss += r * r
	}
	if mean, sd := s/n, math.Sqrt(ss/n); math.Abs(mean) > 6*0.5/math.Sqrt(n) || math.Abs(sd-0.5) > 0.03 {
		t.Errorf("residuals: mean %.4f, sd %.4f, want 0 and 0.5", mean, sd)
	}
	if _, _, err := Regression(10, 0, 1, 0); err == nil {
		t.Error("0 features: no error")
	}
	if _, _, err := Regression(10, 2, 1, -1); err == nil {
		t.Error("negative noise: no error")
	}
}
