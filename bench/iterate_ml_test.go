package bench

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/weirdata/weir/internal/gen"
	"github.com/weirdata/weir/internal/oracle"
)

// Hand-written loops for the two numeric iteration jobs, linear regression by
// batch gradient descent and k-means by Lloyd's algorithm, over flat arrays
// with handWorkers goroutines: the same update rules as iterate/regression.go
// and iterate/kmeans.go, on the same generated data as the weir benchmarks in
// iterate_ml_weir_test.go. Run
//
//	go test ./bench -run '^$' -bench 'Hand(Regression|KMeans)|Weir(Regression|KMeans)' -benchtime 1x
//
// WEIR_ML_SAMPLES sets the number of samples and points (default 1,000,000).

const (
	mlFeatures   = 10  // linear regression's features
	mlDims       = 2   // k-means' coordinates
	mlK          = 10  // k-means' clusters and initial centroids
	mlIterations = 10  // supersteps per job
	mlStep       = 0.5 // linear regression's step
)

// mlSamples returns WEIR_ML_SAMPLES, or 1,000,000.
func mlSamples(tb testing.TB) int {
	if s := os.Getenv("WEIR_ML_SAMPLES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			tb.Fatalf("WEIR_ML_SAMPLES=%q is not a positive count", s)
		}
		return v
	}
	return 1_000_000
}

// regressionData is n samples of gen.Regression (seed 1, noise 0.1) as a
// flat feature array, row i at x[i*d:(i+1)*d], and the targets.
type regressionData struct {
	d int
	x []float64
	y []float64
}

func newRegressionData(tb testing.TB, n, features int) *regressionData {
	tb.Helper()
	_, samples, err := gen.Regression(int64(n), features, 1, 0.1)
	if err != nil {
		tb.Fatal(err)
	}
	r := &regressionData{d: features, x: make([]float64, 0, n*features), y: make([]float64, 0, n)}
	for x, y := range samples {
		r.x = append(r.x, x...)
		r.y = append(r.y, y)
	}
	return r
}

// handRegression is batch gradient descent on the squared loss, as
// iterate.LinearRegression computes it: θ' = θ - step (1/n) Σ (θ·(1, x) - y) (1, x),
// θ = (b, w). Each worker sums the gradients of a contiguous range of samples.
type handRegression struct {
	data    *regressionData
	workers int
	theta   []float64   // b, then w
	partial [][]float64 // per worker: the gradient's sum, b first
}

func newHandRegression(data *regressionData, workers int) *handRegression {
	h := &handRegression{data: data, workers: workers, theta: make([]float64, 1+data.d)}
	for range workers {
		h.partial = append(h.partial, make([]float64, 1+data.d))
	}
	return h
}

func (h *handRegression) reset() { clear(h.theta) }

func (h *handRegression) step(step float64) {
	n := len(h.data.y)
	var wg sync.WaitGroup
	for w := range h.workers {
		wg.Go(func() { h.gradient(w*n/h.workers, (w+1)*n/h.workers, h.partial[w]) })
	}
	wg.Wait()
	for i := range h.theta {
		g := 0.0
		for _, p := range h.partial {
			g += p[i]
		}
		h.theta[i] -= step * g / float64(n)
	}
}

func (h *handRegression) gradient(lo, hi int, g []float64) {
	d, theta := h.data.d, h.theta
	clear(g)
	w := theta[1:]
	for i := lo; i < hi; i++ {
		x := h.data.x[i*d : (i+1)*d]
		e := theta[0]
		for j, v := range x {
			e += w[j] * v
		}
		e -= h.data.y[i]
		g[0] += e
		gw := g[1 : 1+len(x)]
		for j, v := range x {
			gw[j] += e * v
		}
	}
}

// kmeansData is n points of gen.Points (seed 1) in mlDims dimensions around
// k centres, flat, and the initial centroids: the first k points, with ids
// 1..k.
type kmeansData struct {
	d         int
	x         []float64
	centroids []oracle.Centroid
}

func newKMeansData(tb testing.TB, n, dims, k int) *kmeansData {
	tb.Helper()
	_, pts, err := gen.Points(int64(n), dims, k, 1)
	if err != nil {
		tb.Fatal(err)
	}
	m := &kmeansData{d: dims, x: make([]float64, 0, n*dims)}
	for p := range pts {
		if len(m.centroids) < k {
			m.centroids = append(m.centroids, oracle.Centroid{ID: int64(len(m.centroids) + 1), X: p})
		}
		m.x = append(m.x, p...)
	}
	return m
}

// handKMeans is Lloyd's algorithm as iterate.KMeans computes it: every point
// goes to its nearest centroid (squared Euclidean distance, the lowest id on
// ties), every centroid moves to the mean of its points, and a centroid no
// point chose is dropped. Each worker sums a contiguous range of points into
// its own per-centroid sums and counts.
type handKMeans struct {
	data    *kmeansData
	workers int
	ids     []int64   // the centroids' ids, ascending
	cs      []float64 // the centroids, flat, in the order of ids
	sums    [][]float64
	counts  [][]int64
}

func newHandKMeans(data *kmeansData, workers int) *handKMeans {
	h := &handKMeans{data: data, workers: workers}
	h.sums, h.counts = make([][]float64, workers), make([][]int64, workers)
	h.reset()
	return h
}

func (h *handKMeans) reset() {
	cs := slices.Clone(h.data.centroids)
	slices.SortFunc(cs, func(a, b oracle.Centroid) int { return int(a.ID - b.ID) })
	h.ids, h.cs = h.ids[:0], h.cs[:0]
	for _, c := range cs {
		h.ids = append(h.ids, c.ID)
		h.cs = append(h.cs, c.X...)
	}
}

func (h *handKMeans) step() {
	n := len(h.data.x) / h.data.d
	k := len(h.ids)
	var wg sync.WaitGroup
	for w := range h.workers {
		h.sums[w] = append(h.sums[w][:0], make([]float64, k*h.data.d)...)
		h.counts[w] = append(h.counts[w][:0], make([]int64, k)...)
		wg.Go(func() { h.assign(w*n/h.workers, (w+1)*n/h.workers, h.sums[w], h.counts[w]) })
	}
	wg.Wait()
	d := h.data.d
	ids, cs := h.ids[:0], h.cs[:0]
	for c := range k {
		cnt := int64(0)
		for w := range h.workers {
			cnt += h.counts[w][c]
		}
		if cnt == 0 {
			continue
		}
		id := h.ids[c]
		for j := range d {
			s := 0.0
			for w := range h.workers {
				s += h.sums[w][c*d+j]
			}
			cs = append(cs, s/float64(cnt))
		}
		ids = append(ids, id)
	}
	h.ids, h.cs = ids, cs
}

// assign adds the points in [lo, hi) to the sums and counts of their nearest
// centroids.
func (h *handKMeans) assign(lo, hi int, sums []float64, counts []int64) {
	d, cs, k := h.data.d, h.cs, len(h.ids)
	for i := lo; i < hi; i++ {
		p := h.data.x[i*d : (i+1)*d]
		best, bd := 0, math.Inf(1)
		for c := range k {
			q := cs[c*d : (c+1)*d]
			dist := 0.0
			for j, v := range p {
				dist += (v - q[j]) * (v - q[j])
			}
			if dist < bd {
				best, bd = c, dist
			}
		}
		counts[best]++
		s := sums[best*d : (best+1)*d]
		for j, v := range p {
			s[j] += v
		}
	}
}

// TestHandRegressionMatchesLeastSquares: the hand loop's gradient descent
// converges to the least-squares fit of internal/oracle.
func TestHandRegressionMatchesLeastSquares(t *testing.T) {
	data := newRegressionData(t, 3000, 4)
	xs := make([][]float64, len(data.y))
	for i := range xs {
		xs[i] = data.x[i*data.d : (i+1)*data.d]
	}
	w, b := oracle.LeastSquares(xs, data.y)
	h := newHandRegression(data, handWorkers)
	// x uniform in [-1, 1)^4: second moments about 1 and 1/3, so step 1.5
	// shrinks every error by about half a step
	for range 80 {
		h.step(1.5)
	}
	if math.Abs(h.theta[0]-b) > 1e-6 {
		t.Errorf("b = %v, least squares %v", h.theta[0], b)
	}
	for i := range w {
		if math.Abs(h.theta[1+i]-w[i]) > 1e-6 {
			t.Errorf("w[%d] = %v, least squares %v", i, h.theta[1+i], w[i])
		}
	}
}

// TestHandKMeansMatchesLloyd: the hand loop's centroids after each number of
// steps equal internal/oracle's Lloyd, including when a centroid is dropped
// (more initial centroids than clusters).
func TestHandKMeansMatchesLloyd(t *testing.T) {
	for _, k := range []int{4, 7} {
		t.Run(fmt.Sprintf("k%d", k), func(t *testing.T) {
			data := newKMeansData(t, 5000, 3, 4)
			// initial centroids: k points, ids descending so that order is by id
			data.centroids = nil
			for i := range k {
				data.centroids = append(data.centroids, oracle.Centroid{ID: int64(20 - i), X: data.x[i*3 : i*3+3]})
			}
			pts := make([][]float64, len(data.x)/3)
			for i := range pts {
				pts[i] = data.x[i*3 : i*3+3]
			}
			h := newHandKMeans(data, handWorkers)
			for steps := 1; steps <= 6; steps++ {
				h.step()
				want, _ := oracle.KMeans(pts, data.centroids, steps)
				if len(want) != len(h.ids) {
					t.Fatalf("step %d: %d centroids, Lloyd %d", steps, len(h.ids), len(want))
				}
				for c, wc := range want {
					if h.ids[c] != wc.ID {
						t.Fatalf("step %d: centroid %d has id %d, Lloyd's %d", steps, c, h.ids[c], wc.ID)
					}
					for j := range 3 {
						if math.Abs(h.cs[c*3+j]-wc.X[j]) > 1e-9 {
							t.Fatalf("step %d: centroid %d at %v, Lloyd %v", steps, wc.ID, h.cs[c*3:c*3+3], wc.X)
						}
					}
				}
			}
		})
	}
}

var (
	mlRegression = map[int]*regressionData{}
	mlKMeans     = map[int]*kmeansData{}
)

// benchRegression and benchKMeans return the benchmark data of mlSamples,
// generated once per size.
func benchRegression(b *testing.B) *regressionData {
	n := mlSamples(b)
	if mlRegression[n] == nil {
		mlRegression[n] = newRegressionData(b, n, mlFeatures)
	}
	return mlRegression[n]
}

func benchKMeans(b *testing.B) *kmeansData {
	n := mlSamples(b)
	if mlKMeans[n] == nil {
		mlKMeans[n] = newKMeansData(b, n, mlDims, mlK)
	}
	return mlKMeans[n]
}

// BenchmarkHandRegression times mlIterations gradient steps per op with
// handWorkers goroutines and reports the time of one.
func BenchmarkHandRegression(b *testing.B) {
	data := benchRegression(b)
	b.Run(fmt.Sprintf("n%d", len(data.y)), func(b *testing.B) {
		h := newHandRegression(data, handWorkers)
		for b.Loop() {
			h.reset()
			for range mlIterations {
				h.step(mlStep)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*mlIterations), "ms/iter")
	})
}

// BenchmarkHandKMeans times mlIterations Lloyd steps per op with handWorkers
// goroutines and reports the time of one.
func BenchmarkHandKMeans(b *testing.B) {
	data := benchKMeans(b)
	b.Run(fmt.Sprintf("n%d", len(data.x)/data.d), func(b *testing.B) {
		h := newHandKMeans(data, handWorkers)
		for b.Loop() {
			h.reset()
			for range mlIterations {
				h.step()
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*mlIterations), "ms/iter")
	})
}
