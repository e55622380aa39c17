package dataset

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
)

// executeSpread builds a program with build in one Env per part of slots,
// each a process of a spread job over cluster/dataplane, runs them at once
// and returns each part's Result and error.
func executeSpread(t *testing.T, slots []int, memory int64, build func(part int, env *Env)) ([]*Result, []error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	peers := make([]*shuffletest.Peer, len(slots))
	for k := range peers {
		peers[k] = shuffletest.Start(t, shuffle.Options{Name: fmt.Sprint("p", k), HeartbeatInterval: 100 * time.Millisecond})
	}
	p := 0
	for _, n := range slots {
		p += n
	}
	results, errs := make([]*Result, len(slots)), make([]error, len(slots))
	var wg sync.WaitGroup
	for k := range slots {
		sp := &Spread{Part: k, Slots: slots, Transport: func(stage int, part func(v, i int) int) (Transport, error) {
			return &dataplane.Transport{Job: fmt.Sprintf("spread/%d", stage), Client: peers[k].Client, Server: peers[k].Server,
				Addr: func(v, i int) string { return peers[part(v, i)].Addr }}, nil
		}}
		tmp := t.TempDir()
		env := New(Options{Parallelism: p, Memory: memory, SegmentSize: 4096, TmpDir: tmp, BatchSize: 64, Spread: sp})
		build(k, env)
		wg.Go(func() { results[k], errs[k] = env.Execute(ctx) })
	}
	wg.Wait()
	return results, errs
}

// spreadLayouts are the placements the spread iteration tests run in:
// two processes of one slot, and of two and one.
var spreadLayouts = []struct {
	slots  []int
	memory int64
}{{[]int{1, 1}, 0}, {[]int{2, 1}, 0}, {[]int{2, 1}, 96 << 10}}

// TestSpreadIterate runs iterations spread over processes: PageRank (a
// bulk iteration with a loop-invariant input) against the power
// iteration, connected components (a delta iteration, its solution set
// spilling under the tiny budget) against union-find, with every
// process's statistics the whole superstep's and equal to one process's.
func TestSpreadIterate(t *testing.T) {
	for _, l := range spreadLayouts {
		t.Run(fmt.Sprintf("slots=%v/memory=%d", l.slots, l.memory), func(t *testing.T) {
			t.Run("pagerank", func(t *testing.T) {
				const size, k = 300, 12
				pages, links := rankGraph(size)
				oracle := powerIteration(size, links, k)
				got := make([]*Collected[page], len(l.slots))
				res, errs := executeSpread(t, l.slots, l.memory, func(part int, env *Env) {
					got[part] = Collect(pageRank(env, pages, links, k))
				})
				for part := range l.slots {
					if errs[part] != nil {
						t.Fatalf("part %d: %v", part, errs[part])
					}
					vals := got[part].Values()
					if len(vals) != size {
						t.Fatalf("part %d: %d ranks, want %d", part, len(vals), size)
					}
					for _, p := range vals {
						if math.Abs(p.Rank-oracle[p.ID]) > 1e-9 {
							t.Fatalf("part %d: page %d: rank %.9f, the oracle's %.9f", part, p.ID, p.Rank, oracle[p.ID])
						}
					}
					steps := res[part].Iterations[0].Supersteps
					if len(steps) != k {
						t.Fatalf("part %d: %d supersteps, want %d", part, len(steps), k)
					}
					for _, s := range steps {
						if s.Records != size {
							t.Fatalf("part %d: superstep %d: %d records, want %d", part, s.Superstep, s.Records, size)
						}
					}
				}
			})
			t.Run("components", func(t *testing.T) {
				vs, ls := randomGraph(5000, 3000, 2000)
				want := unionFind(vs, ls)
				one := New(Options{Parallelism: 2, SegmentSize: 4096, TmpDir: t.TempDir()})
				Collect(connectedComponents(one, vs, ls, 1000))
				oneRes, err := one.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				got := make([]*Collected[vertexComponent], len(l.slots))
				res, errs := executeSpread(t, l.slots, l.memory, func(part int, env *Env) {
					got[part] = Collect(connectedComponents(env, vs, ls, 1000))
				})
				spilled := int64(0)
				for part := range l.slots {
					if errs[part] != nil {
						t.Fatalf("part %d: %v", part, errs[part])
					}
					vals := got[part].Values()
					if len(vals) != len(vs) {
						t.Fatalf("part %d: %d vertices, want %d", part, len(vals), len(vs))
					}
					for _, x := range vals {
						if want[x.V] != x.C {
							t.Fatalf("part %d: vertex %d in component %d, want %d", part, x.V, x.C, want[x.V])
						}
					}
					steps := res[part].Iterations[0].Supersteps
					if w, o := worksets(steps), worksets(oneRes.Iterations[0].Supersteps); !slices.Equal(w, o) {
						t.Fatalf("part %d: worksets %v, one process's %v", part, w, o)
					}
					for i, s := range steps {
						if d := oneRes.Iterations[0].Supersteps[i].Delta; s.Delta != d {
							t.Fatalf("part %d: superstep %d: delta %d, one process's %d", part, s.Superstep, s.Delta, d)
						}
					}
					spilled += steps[len(steps)-1].SolutionSpilled
				}
				if l.memory > 0 && spilled == 0 {
					t.Fatalf("the solution set did not spill under a budget of %d bytes", l.memory)
				}
			})
		})
	}
}

// rankGraph is a ring of size pages with four random links per page.
func rankGraph(size int) ([]int64, []link) {
	pages, ls := randomGraph(uint64(size), size, 4*size)
	for v := 1; v <= size; v++ {
		ls = append(ls, link{int64(v), int64(v%size + 1)})
	}
	return pages, ls
}

// TestSpreadIterateCriteria: spread, an aggregator's Previous is the
// whole superstep's in every process, its convergence criterion and a
// termination criterion end the iteration in every process at the
// superstep a direct computation predicts.
func TestSpreadIterateCriteria(t *testing.T) {
	xs := []int64{5, 3, 17, 0, 9, 12, 40, 1}
	for _, l := range spreadLayouts {
		t.Run(fmt.Sprintf("slots=%v/memory=%d", l.slots, l.memory), func(t *testing.T) {
			t.Run("aggregator", func(t *testing.T) {
				var mu sync.Mutex
				prev := make([]map[int]int64, len(l.slots)) // per part: superstep -> Previous seen there
				var converge []int64                        // what ConvergeWhen saw (part 0 runs it)
				got := make([]*Collected[int64], len(l.slots))
				res, errs := executeSpread(t, l.slots, l.memory, func(part int, env *Env) {
					prev[part] = map[int]int64{}
					r := Iterate(FromSlice(env, xs), 100, func(it *Iteration, p *DataSet[int64]) *DataSet[int64] {
						sum := LoopSum[int64](it)
						it.ConvergeWhen(func(step int) bool {
							converge = append(converge, sum.Previous())
							return sum.Previous() == 0
						})
						return halveEach(p, sum, func() {
							mu.Lock()
							prev[part][it.Superstep()] = sum.Previous()
							mu.Unlock()
						})
					})
					got[part] = Collect(r)
				})
				// the sums after each halving
				var want []int64
				for v := slices.Clone(xs); ; {
					var s int64
					for i := range v {
						v[i] /= 2
						s += v[i]
					}
					want = append(want, s)
					if s == 0 {
						break
					}
				}
				if !slices.Equal(converge, want) {
					t.Fatalf("the convergence criterion saw %v, want %v", converge, want)
				}
				for part := range l.slots {
					if errs[part] != nil {
						t.Fatalf("part %d: %v", part, errs[part])
					}
					if n := len(res[part].Iterations[0].Supersteps); n != len(want) {
						t.Fatalf("part %d: %d supersteps, want %d", part, n, len(want))
					}
					for step, p := range prev[part] {
						w := int64(0)
						if step > 1 {
							w = want[step-2]
						}
						if p != w {
							t.Fatalf("part %d: superstep %d saw Previous %d, want %d", part, step, p, w)
						}
					}
					if len(prev[part]) != len(want) {
						t.Fatalf("part %d ran the step in %d supersteps, want %d", part, len(prev[part]), len(want))
					}
					vals := got[part].Values()
					if len(vals) != len(xs) || slices.Max(vals) != 0 {
						t.Fatalf("part %d: result %v", part, vals)
					}
				}
			})
			t.Run("criterion", func(t *testing.T) {
				res, errs := executeSpread(t, l.slots, l.memory, func(part int, env *Env) {
					r := Iterate(FromSlice(env, xs), 100, func(it *Iteration, p *DataSet[int64]) *DataSet[int64] {
						next := Map(p, func(x int64) int64 { return max(x-1, 0) })
						TerminateWhenEmpty(it, next.Filter(func(x int64) bool { return x > 0 }))
						return next
					})
					Collect(r)
				})
				for part := range l.slots {
					if errs[part] != nil {
						t.Fatalf("part %d: %v", part, errs[part])
					}
					// the largest value, 40, reaches 0 in superstep 40
					if n := len(res[part].Iterations[0].Supersteps); n != 40 {
						t.Fatalf("part %d: %d supersteps, want 40", part, n)
					}
				}
			})
		})
	}
}

// TestSpreadIterateFails: a step function that fails in one process in
// superstep 3 fails the job in every process: the other learns it at the
// barrier (the failed part's control channel ends before the loop's last
// verdict), whichever part failed.
func TestSpreadIterateFails(t *testing.T) {
	for _, failing := range []int{0, 1} {
		t.Run(fmt.Sprint("part=", failing), func(t *testing.T) {
			_, errs := executeSpread(t, []int{1, 1}, 0, func(part int, env *Env) {
				r := Iterate(FromSlice(env, []int64{1, 2, 3, 4, 5, 6, 7, 8}), 10, func(it *Iteration, p *DataSet[int64]) *DataSet[int64] {
					next := MapPartition(p, func(vals iter.Seq[int64], emit func(int64)) {
						if part == failing && it.Superstep() == 3 {
							panic("boom")
						}
						for x := range vals {
							emit(x + 1)
						}
					})
					// the other part's reduce waits for the failed part's records
					return GroupBy(next, func(x int64) int64 { return x % 3 }).Reduce(func(a, b int64) int64 { return a + b })
				})
				Collect(r)
			})
			if errs[failing] == nil || !strings.Contains(errs[failing].Error(), "boom") {
				t.Fatalf("the failing part: %v, want the step function's panic", errs[failing])
			}
			other := 1 - failing
			if errs[other] == nil || !strings.Contains(errs[other].Error(), fmt.Sprintf("part %d", failing)) {
				t.Fatalf("the other part: %v, want an error naming part %d", errs[other], failing)
			}
		})
	}
}
