package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestRichCoMap: at parallelism 1 and 3, RichCoMap maps every record of
// both streams once with its own function (the oracle maps the inputs
// directly); Open runs once per subtask, before any record, with that
// subtask's index, and Close once per subtask after it.
func TestRichCoMap(t *testing.T) {
	for _, p := range []int{1, 3} {
		t.Run(fmt.Sprintf("p%d", p), func(t *testing.T) {
			var mu sync.Mutex
			opened, closed := map[int]int{}, 0
			env := New(Options{Parallelism: p})
			nums := FromSlice(env, ints(50))
			words := FromSlice(env, []string{"a", "bb", "ccc"})
			got := Collect(RichCoMap(Connect(nums, words), func() RichCoMapFunction[int, string, string] {
				open := false
				check := func() error {
					if !open {
						return errors.New("a record before Open")
					}
					return nil
				}
				return RichCoMapFunction[int, string, string]{
					Open: func(rc *RuntimeContext) error {
						mu.Lock()
						defer mu.Unlock()
						if rc.NumberOfParallelSubtasks() != p {
							return fmt.Errorf("parallelism %d, want %d", rc.NumberOfParallelSubtasks(), p)
						}
						opened[rc.IndexOfThisSubtask()]++
						open = true
						return nil
					},
					Map1: func(n int) (string, error) { return "n" + strconv.Itoa(n), check() },
					Map2: func(w string) (string, error) { return "w" + w, check() },
					Close: func() error {
						mu.Lock()
						defer mu.Unlock()
						closed++
						return nil
					},
				}
			}))
			execute(t, env)
			var want []string
			for _, n := range ints(50) {
				want = append(want, "n"+strconv.Itoa(n))
			}
			for _, w := range []string{"a", "bb", "ccc"} {
				want = append(want, "w"+w)
			}
			if have := sorted(got.Values(), compareString); !slices.Equal(have, sorted(want, compareString)) {
				t.Fatalf("rich comap: %v", have)
			}
			if len(opened) != p || closed != p {
				t.Fatalf("opened per subtask %v, closed %d; want each of %d subtasks once", opened, closed, p)
			}
			for i := range p {
				if opened[i] != 1 {
					t.Fatalf("subtask %d opened %d times", i, opened[i])
				}
			}
		})
	}
}

// TestRichCoFlatMap: FlatMap1 and FlatMap2 collect any number of records
// per input (the oracle expands the inputs directly); an error from either
// fails the job with it, and Close still runs.
func TestRichCoFlatMap(t *testing.T) {
	env := New(Options{Parallelism: 2})
	nums := FromSlice(env, []int{0, 1, 2, 3})
	words := FromSlice(env, []string{"x", "yz"})
	got := Collect(RichCoFlatMap(Connect(nums, words), func() RichCoFlatMapFunction[int, string, string] {
		return RichCoFlatMapFunction[int, string, string]{
			FlatMap1: func(n int, out Collector[string]) error {
				for range n {
					out.Collect(strconv.Itoa(n))
				}
				return nil
			},
			FlatMap2: func(w string, out Collector[string]) error {
				for _, r := range w {
					out.Collect(string(r))
				}
				return nil
			},
		}
	}))
	execute(t, env)
	want := []string{"1", "2", "2", "3", "3", "3", "x", "y", "z"}
	if have := sorted(got.Values(), compareString); !slices.Equal(have, want) {
		t.Fatalf("rich coflatmap: %v, want %v", have, want)
	}

	boom := errors.New("boom")
	var mu sync.Mutex
	closed := 0
	env = New(Options{Parallelism: 2})
	Collect(RichCoFlatMap(Connect(FromSlice(env, []int{1}), FromSlice(env, []string{"bad"})), func() RichCoFlatMapFunction[int, string, string] {
		return RichCoFlatMapFunction[int, string, string]{
			FlatMap1: func(int, Collector[string]) error { return nil },
			FlatMap2: func(string, Collector[string]) error { return boom },
			Close: func() error {
				mu.Lock()
				defer mu.Unlock()
				closed++
				return nil
			},
		}
	}))
	if _, err := env.Execute(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if closed != 2 {
		t.Fatalf("closed %d subtasks, want 2", closed)
	}
}

// TestRichCoMapMissingFunction: a RichCoMap without Map2 fails the job
// naming what is missing.
func TestRichCoMapMissingFunction(t *testing.T) {
	env := New(Options{})
	Collect(RichCoMap(Connect(FromSlice(env, []int{1}), FromSlice(env, []int{2})), func() RichCoMapFunction[int, int, int] {
		return RichCoMapFunction[int, int, int]{Map1: func(v int) (int, error) { return v, nil }}
	}))
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "RichCoMap: no Map1 or Map2 function") {
		t.Fatalf("error %v", err)
	}
}
