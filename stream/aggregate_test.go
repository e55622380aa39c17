package stream

import (
	"context"
	"slices"
	"testing"
)

type tuple3 struct{ F0, F1, F2 int }

func runAgg(t *testing.T, in []tuple3, agg func(KeyedStream[tuple3, int]) DataStream[tuple3]) []tuple3 {
	t.Helper()
	env := New(Options{Parallelism: 1})
	out := Collect(agg(KeyBy(FromSlice(env, in), func(v tuple3) int { return v.F0 })))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.Values()
}

func f1(v tuple3) int        { return v.F1 }
func setF1(v *tuple3, x int) { v.F1 = x }
func check(t *testing.T, name string, got, want []tuple3) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot  %v\nwant %v", name, got, want)
	}
}

// TestGroupSumMinMax follows Flink's AggregationFunctionTest.groupSumIntegerTest
// over (i%3, i), i < 9, keyed by field 0, aggregated on field 1: running
// sums per key, the key's first value as min, the latest as max.
func TestGroupSumMinMax(t *testing.T) {
	var in, sum, mn, mx []tuple3
	sums := [3]int{}
	for i := 0; i < 9; i++ {
		in = append(in, tuple3{i % 3, i, 0})
		sums[i%3] += i
		sum = append(sum, tuple3{i % 3, sums[i%3], 0})
		mn = append(mn, tuple3{i % 3, i % 3, 0})
		mx = append(mx, tuple3{i % 3, i, 0})
	}
	check(t, "sum", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return Sum(ks, f1, setF1) }), sum)
	check(t, "min", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return Min(ks, f1, setF1) }), mn)
	check(t, "max", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return Max(ks, f1, setF1) }), mx)
}

// TestMinMaxBy follows Flink's AggregationFunctionTest.minMaxByTest over
// (0, i%3, i), i < 9, aggregated on field 1 with first = true: maxBy keeps
// the first record holding the maximum (0,2,2), minBy the first holding
// the minimum (0,0,0).
func TestMinMaxBy(t *testing.T) {
	var in []tuple3
	for i := 0; i < 9; i++ {
		in = append(in, tuple3{0, i % 3, i})
	}
	maxBy := []tuple3{{0, 0, 0}, {0, 1, 1}, {0, 2, 2}, {0, 2, 2}, {0, 2, 2}, {0, 2, 2}, {0, 2, 2}, {0, 2, 2}, {0, 2, 2}}
	minBy := slices.Repeat([]tuple3{{0, 0, 0}}, 9)
	check(t, "maxBy", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return MaxBy(ks, f1) }), maxBy)
	check(t, "minBy", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return MinBy(ks, f1) }), minBy)
}

// TestAggregationKeepsFirstFields: sum, min and max replace only the
// aggregated field and keep the other fields of the key's first record
// (Flink's SumAggregator and ComparableAggregator with byAggregate false).
func TestAggregationKeepsFirstFields(t *testing.T) {
	in := []tuple3{{0, 5, 100}, {0, 3, 200}, {0, 9, 300}, {1, 1, 400}, {0, 4, 500}}
	check(t, "sum", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return Sum(ks, f1, setF1) }),
		[]tuple3{{0, 5, 100}, {0, 8, 100}, {0, 17, 100}, {1, 1, 400}, {0, 21, 100}})
	check(t, "min", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return Min(ks, f1, setF1) }),
		[]tuple3{{0, 5, 100}, {0, 3, 100}, {0, 3, 100}, {1, 1, 400}, {0, 3, 100}})
	check(t, "max", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] { return Max(ks, f1, setF1) }),
		[]tuple3{{0, 5, 100}, {0, 5, 100}, {0, 9, 100}, {1, 1, 400}, {0, 9, 100}})
	check(t, "reduce", runAgg(t, in, func(ks KeyedStream[tuple3, int]) DataStream[tuple3] {
		return ks.Reduce(func(a, b tuple3) tuple3 { return tuple3{a.F0, a.F1 * b.F1, b.F2} })
	}), []tuple3{{0, 5, 100}, {0, 15, 200}, {0, 135, 300}, {1, 1, 400}, {0, 540, 500}})
}

// TestSumMaxParallelism: a rolling sum over many keys at parallelism 1, 2
// and 3, with numbers of key groups that are powers of two (the key group
// is a mask of the murmur hash) and that are not (a modulo), gives every
// key's running sums in its order, against a sequential sum.
func TestSumMaxParallelism(t *testing.T) {
	var in []tuple3
	for i := range 5000 {
		in = append(in, tuple3{(i * 7919) % 613, i % 11, i})
	}
	want := map[int][]int{}
	sums := map[int]int{}
	for _, v := range in {
		sums[v.F0] += v.F1
		want[v.F0] = append(want[v.F0], sums[v.F0])
	}
	for _, maxP := range []int{10, 128, 129} {
		for _, p := range []int{1, 2, 3} {
			env := New(Options{Parallelism: p, MaxParallelism: maxP})
			src := FromSlice(env, in).SetParallelism(1) // one reader: each key's order is the input's
			out := Collect(Sum(KeyBy(src, func(v tuple3) int { return v.F0 }), f1, setF1))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatalf("maxP %d, p %d: %v", maxP, p, err)
			}
			got := map[int][]int{}
			for _, v := range out.Values() {
				got[v.F0] = append(got[v.F0], v.F1)
			}
			if len(got) != len(want) {
				t.Fatalf("maxP %d, p %d: %d keys, want %d", maxP, p, len(got), len(want))
			}
			for k, w := range want {
				if !slices.Equal(got[k], w) {
					t.Fatalf("maxP %d, p %d: key %d: %v, want %v", maxP, p, k, got[k], w)
				}
			}
		}
	}
}
