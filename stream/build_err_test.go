package stream

import (
	"context"
	"strings"
	"testing"
)

// TestBuildErrors: mistakes found while building are returned by Execute
// with the caller's file:line, and nothing runs.
func TestBuildErrors(t *testing.T) {
	env := New(Options{Parallelism: 1})
	ds := FromSlice(env, []int{1, 2})
	ds.SetParallelism(0)
	KeyBy(ds, func(int) chan int { return nil })
	Process[int, int](ds, nil)
	_, err := env.Execute(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"build_err_test.go:14: FromSlice: parallelism 0", "build_err_test.go:15: KeyBy", "build_err_test.go:16: Process: nil function"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

type pairKey struct {
	A string
	B int
}

// TestStructKey keys by a struct (hashed through its codec bytes, shared
// by the producer subtasks) at parallelism 3: sums per key equal a naive
// count.
func TestStructKey(t *testing.T) {
	env := New(Options{Parallelism: 3})
	var in []tuple3
	want := map[pairKey]int{}
	for i := range 300 {
		v := tuple3{i % 5, i % 7, 1}
		in = append(in, v)
		want[pairKey{string(rune('a' + v.F0)), v.F1}]++
	}
	ks := KeyBy(FromSlice(env, in), func(v tuple3) pairKey { return pairKey{string(rune('a' + v.F0)), v.F1} })
	sums := Sum(ks, func(v tuple3) int { return v.F2 }, func(v *tuple3, n int) { v.F2 = n })
	got := Collect(sums)
	execute(t, env)
	final := map[pairKey]int{}
	for _, v := range got.Values() {
		k := pairKey{string(rune('a' + v.F0)), v.F1}
		final[k] = max(final[k], v.F2)
	}
	if len(final) != len(want) {
		t.Fatalf("%d keys, want %d", len(final), len(want))
	}
	for k, c := range want {
		if final[k] != c {
			t.Errorf("%v: %d, want %d", k, final[k], c)
		}
	}
}

// TestNilFunctions: a nil function given to any transformation is a build
// error naming the caller's line and the transformation, never a panic at
// run time.
func TestNilFunctions(t *testing.T) {
	env := New(Options{Parallelism: 1})
	ds := FromSlice(env, []int{1, 2})
	Collect(Map[int, int](ds, nil))
	Collect(ds.Filter(nil))
	Collect(FlatMap[int, int](ds, nil))
	ks := KeyBy[int, int](ds, nil)
	Collect(ks.Reduce(nil))
	Collect(Sum[int, int, int](KeyBy(ds, func(v int) int { return v }), nil, nil))
	Collect(KeyedProcess[int, int, int](KeyBy(ds, func(v int) int { return v }), nil))
	Collect(CoMap[int, int, int](Connect(ds, ds), nil, nil))
	_, err := env.Execute(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"build_err_test.go:70: Map: nil function", "build_err_test.go:71: Filter: nil function",
		"build_err_test.go:72: FlatMap: nil function", "build_err_test.go:73: KeyBy: nil key selector",
		"build_err_test.go:74: Reduce: nil function", "build_err_test.go:75: Sum: nil field function",
		"build_err_test.go:76: KeyedProcess: nil function", "build_err_test.go:77: CoMap: nil function"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
