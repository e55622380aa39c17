package stream

import (
	"context"
	"slices"
	"testing"
)

// TestChaining: operators over forward edges between equal parallelisms
// run in their producer's task, as Flink chains; a keyed edge, a changed
// parallelism, a rebalance and a two-input operator start a new task.
func TestChaining(t *testing.T) {
	env := New(Options{Parallelism: 2})
	src := FromSlice(env, []int{1, 2, 3, 4})
	mapped := Map(src, func(v int) int { return v * 2 }).Filter(func(v int) bool { return v > 2 })
	sums := KeyedProcess(KeyBy(mapped, func(v int) int { return v % 2 }), func() KeyedProcessFunction[int, int, int] {
		return KeyedProcessFunction[int, int, int]{ProcessElement: func(v int, _ *KeyedContext[int], out Collector[int]) error {
			out.Collect(v)
			return nil
		}}
	})
	single := Map(sums, func(v int) int { return v }).SetParallelism(1).Name("single")
	got := Collect(single.Union(Map(sums.Rebalance(), func(v int) int { return v }).Name("rebalanced")))
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range res.Vertices {
		names = append(names, v.Name)
	}
	want := []string{"FromSlice", "KeyedProcess", "single", "rebalanced", "Union"}
	if !slices.Equal(names, want) {
		t.Fatalf("tasks %v, want %v", names, want)
	}
	if have := sorted(got.Values(), compareInt); !slices.Equal(have, []int{4, 4, 6, 6, 8, 8}) {
		t.Fatalf("values %v", have)
	}
}
