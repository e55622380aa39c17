package dataset

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"testing"
)

// TestGatherPair: the function sees every record of its first input before
// any of its second, all of both (from every subtask), at parallelism 1 and
// 3, with empty inputs, under a tiny budget, and when both inputs come from
// one producer (where reading the first to its end needs the second
// buffered); ranging over the second first drains the first.
func TestGatherPair(t *testing.T) {
	for _, p := range []int{1, 3} {
		for _, mem := range []int64{0, 64 << 10} {
			for _, shape := range []string{"apart", "shared", "empty", "second-first"} {
				t.Run(fmt.Sprintf("p%d/mem%d/%s", p, mem, shape), func(t *testing.T) {
					env := New(Options{Parallelism: p, Memory: mem, TmpDir: t.TempDir(), BatchSize: 16})
					n := 5000
					if shape == "empty" {
						n = 0
					}
					vals := make([]int64, n)
					for i := range vals {
						vals[i] = int64(i)
					}
					src := FromSlice(env, vals)
					var first, second *DataSet[int64]
					if shape == "shared" {
						first = src.Filter(func(v int64) bool { return v%2 == 0 })
						second = Map(src, func(v int64) int64 { return -v - 1 })
					} else {
						first = src
						second = Map(FromSlice(env, vals), func(v int64) int64 { return -v - 1 })
					}
					out := Collect(GatherPair(first, second, func(r Resources, a iter.Seq[[]int64], b iter.Seq[[]int64], emit func(string)) error {
						var got []int64
						if shape == "second-first" {
							for bs := range b {
								got = append(got, bs...)
							}
							for range a {
								t.Error("the first input yields after the second")
							}
							emit(fmt.Sprint(len(got)))
							return nil
						}
						for bs := range a {
							got = append(got, bs...)
						}
						nf := len(got)
						for bs := range b {
							got = append(got, bs...)
						}
						for i, v := range got {
							if (i < nf) != (v >= 0) {
								t.Errorf("record %d (%d) out of order: %d of the first input", i, v, nf)
								break
							}
						}
						slices.Sort(got)
						emit(fmt.Sprint(nf, len(got)-nf, got))
						return nil
					}))
					if _, err := env.Execute(context.Background()); err != nil {
						t.Fatal(err)
					}
					var want []int64
					nf := 0
					for _, v := range vals {
						if shape != "shared" || v%2 == 0 {
							want = append(want, v)
							nf++
						}
						want = append(want, -v-1)
					}
					slices.Sort(want)
					w := fmt.Sprint(nf, len(want)-nf, want)
					if shape == "second-first" {
						w = fmt.Sprint(n)
					}
					if got := out.Values(); len(got) != 1 || got[0] != w {
						t.Errorf("got %.200v, want %.200v", got, w)
					}
				})
			}
		}
	}
}
