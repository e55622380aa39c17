package iterate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirdata/weir/dataset"
)

// Sample is a training sample: features X and target Y.
type Sample struct {
	X []float64
	Y float64
}

// Model is a linear model y = B + W·x.
type Model struct {
	B float64
	W []float64
}

// gradient is the sum of N samples' gradients of the squared loss: G[0] for
// B, G[1+i] for W[i].
type gradient struct {
	G []float64
	N int64
}

// LinearRegression fits y ≈ b + w·x to samples by batch gradient descent on
// the squared loss, as Flink's LinearRegression example does: a bulk
// iteration over the one-record model, starting at zero, whose every
// superstep computes every sample's gradient against the model (a broadcast
// set) and sums them, both in one fold per subtask (dataset.FoldWithBroadcast:
// each sample is folded into its subtask's sum as it is read, the partial sums
// then merged), and moves the model by step times the mean gradient:
//
//	θ' = θ - step * (1/n) Σ (θ·(1, x) - y) (1, x)
//
//	model ─► Iterate ┬─► samples ─► Σ gradient (model broadcast) ─► merge ─┐
//	                 └─────────────────────────── update (model broadcast) ◄┘
//
// It converges when step is below 2 over the largest eigenvalue of the
// samples' (1, x) second-moment matrix; Flink's example uses 0.01. Every
// sample should have as many features as the first; an empty input gives no
// model.
func LinearRegression(samples *dataset.DataSet[Sample], iterations int, step float64) *dataset.DataSet[Model] {
	initial := dataset.FromSlice(samples.Env(), []Model{{}})
	return dataset.Iterate(initial, iterations, func(_ *dataset.Iteration, model *dataset.DataSet[Model]) *dataset.DataSet[Model] {
		sum := dataset.FoldWithBroadcast(samples, model,
			func(Sample, []Model) int8 { return 0 },
			func(g *gradient, s Sample, m []Model) {
				g.grow(1 + len(s.X))
				e := predict(m[0], s.X) - s.Y
				g.G[0] += e
				gw := g.G[1 : 1+len(s.X)]
				for i, x := range s.X {
					gw[i] += e * x
				}
				g.N++
			},
			func(g *gradient, o gradient) {
				g.grow(len(o.G))
				for i, x := range o.G {
					g.G[i] += x
				}
				g.N += o.N
			})
		return dataset.MapWithBroadcast(sum, model, func(k dataset.KV[int8, gradient], m []Model) Model {
			g, n := k.Value.G, float64(k.Value.N)
			next := Model{B: m[0].B - step*g[0]/n, W: make([]float64, len(g)-1)}
			for i := range next.W {
				w := 0.0
				if i < len(m[0].W) {
					w = m[0].W[i]
				}
				next.W[i] = w - step*g[1+i]/n
			}
			return next
		})
	})
}

// grow makes g a sum of gradients of n coefficients: zero ones the first
// time. It panics when g has another number.
func (g *gradient) grow(n int) {
	switch {
	case g.G == nil:
		g.G = make([]float64, n)
	case len(g.G) != n:
		panic(fmt.Sprintf("iterate: linear-regression: samples with %d and %d features", len(g.G)-1, n-1))
	}
}

// predict returns m's prediction for x; missing weights count as zero.
func predict(m Model, x []float64) float64 {
	y, n := m.B, min(len(m.W), len(x))
	x = x[:n]
	for i, w := range m.W[:n] {
		y += w * x[i]
	}
	return y
}

// parseSample reads "x1 .. xd y".
func parseSample(line []byte) (Sample, error) {
	xs, err := parseFloats(line)
	if err != nil {
		return Sample{}, fmt.Errorf("value %w", err)
	}
	if len(xs) < 2 {
		return Sample{}, fmt.Errorf("%q: want features and a target separated by spaces", line)
	}
	return Sample{X: xs[:len(xs)-1], Y: xs[len(xs)-1]}, nil
}

// coefficient is a row of RunLinearRegression's Parquet output: a model's
// coefficient named as the text line orders them ("b", "w1", .. "wd").
type coefficient struct {
	Name  string  `weir:"name"`
	Value float64 `weir:"value"`
}

// RunLinearRegression runs LinearRegression on input ("x1 .. xd y" lines; ""
// for RegressionSamples) and writes the model as one line "b w1 .. wd"; or,
// to a Parquet o.Output, one row per coefficient in that order with columns
// name (STRING: "b", "w1", ..) and value (DOUBLE).
func RunLinearRegression(ctx context.Context, o Options, input string, iterations int, step float64) error {
	env := dataset.New(o.Dataset)
	var samples *dataset.DataSet[Sample]
	if input == "" {
		samples = dataset.FromSlice(env, RegressionSamples)
	} else {
		var err error
		if samples, err = readLines(env, "input", input, parseSample); err != nil {
			return fmt.Errorf("iterate: linear-regression: input file: %w", err)
		}
	}
	model := LinearRegression(samples, iterations, step)
	if isParquet(o.Output) {
		rows := dataset.FlatMap(model, func(m Model, out func(coefficient)) {
			out(coefficient{Name: "b", Value: m.B})
			for i, w := range m.W {
				out(coefficient{Name: "w" + strconv.Itoa(i+1), Value: w})
			}
		})
		if err := emitParquet(ctx, env, rows, o); err != nil {
			return fmt.Errorf("iterate: linear-regression: %w", err)
		}
		return nil
	}
	out := dataset.Map(model, func(m Model) string {
		var b strings.Builder
		b.WriteString(formatFloat(m.B))
		for _, w := range m.W {
			b.WriteByte(' ')
			b.WriteString(formatFloat(w))
		}
		return b.String()
	})
	if err := emit(ctx, env, out, o); err != nil {
		return fmt.Errorf("iterate: linear-regression: %w", err)
	}
	return nil
}
