package dataset

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

// TestIterateCounter: the simplest bulk iteration, x -> x+1 for n supersteps,
// gives x+n, and reports one superstep per iteration with the partial
// solution's size.
func TestIterateCounter(t *testing.T) {
	for _, c := range configs {
		for _, n := range []int{1, 3, 10} {
			for _, size := range []int{0, 1, 1000} {
				t.Run(fmt.Sprintf("%s/n%d/size%d", c.name, n, size), func(t *testing.T) {
					env := newEnv(t, c)
					xs := make([]int64, size)
					for i := range xs {
						xs[i] = int64(i) * 10
					}
					res := Iterate(FromSlice(env, xs), n, func(it *Iteration, p *DataSet[int64]) *DataSet[int64] {
						return Map(p, func(x int64) int64 { return x + 1 })
					})
					got := Collect(res)
					r, err := env.Execute(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					vals := got.Values()
					slices.Sort(vals)
					if len(vals) != size {
						t.Fatalf("%d values, want %d", len(vals), size)
					}
					for i, v := range vals {
						if v != int64(i)*10+int64(n) {
							t.Fatalf("value %d is %d, want %d", i, v, int64(i)*10+int64(n))
						}
					}
					if len(r.Iterations) != 1 || len(r.Iterations[0].Supersteps) != n {
						t.Fatalf("iteration stats %+v, want %d supersteps", r.Iterations, n)
					}
					for _, s := range r.Iterations[0].Supersteps {
						if s.Records != int64(size) {
							t.Fatalf("superstep %d: %d records, want %d", s.Superstep, s.Records, size)
						}
					}
				})
			}
		}
	}
}

type page struct {
	ID   int64
	Rank float64
}

type link struct{ Src, Dst int64 }

type adjacency struct {
	ID    int64
	Dests []int64
}

// pageRank is Flink's PageRank example as a DataSet program: ranks join the
// adjacency lists (a loop-invariant input), every page sends rank/outdegree
// to its neighbours, the sums are damped.
func pageRank(env *Env, pages []int64, links []link, iterations int) *DataSet[page] {
	n := float64(len(pages))
	const d = 0.85
	initial := Map(FromSlice(env, pages), func(id int64) page { return page{id, 1 / n} })
	adj := ReduceGroup(GroupBy(FromSlice(env, links), func(l link) int64 { return l.Src }),
		func(src int64, ls iter.Seq[link], emit func(adjacency)) {
			a := adjacency{ID: src}
			for l := range ls {
				a.Dests = append(a.Dests, l.Dst)
			}
			emit(a)
		})
	return Iterate(initial, iterations, func(it *Iteration, ranks *DataSet[page]) *DataSet[page] {
		withAdj := Join(ranks, adj, func(p page) int64 { return p.ID }, func(a adjacency) int64 { return a.ID },
			func(p *page, a *adjacency) rankedAdjacency { return rankedAdjacency{p.Rank, a.Dests} })
		contribs := FlatMap(withAdj, func(r rankedAdjacency, emit func(page)) {
			for _, dst := range r.Dests {
				emit(page{dst, r.Rank / float64(len(r.Dests))})
			}
		})
		sums := GroupBy(contribs, func(p page) int64 { return p.ID }).
			Reduce(func(a, b page) page { return page{a.ID, a.Rank + b.Rank} })
		return Map(sums, func(p page) page { return page{p.ID, (1-d)/n + d*p.Rank} })
	})
}

type rankedAdjacency struct {
	Rank  float64
	Dests []int64
}

// TestPageRankFlinkData: Flink's PageRank test data (5 pages), 3 iterations,
// gives Flink's expected ranks, and the oracle's.
func TestPageRankFlinkData(t *testing.T) {
	links := []link{{2, 1}, {5, 2}, {5, 4}, {4, 3}, {4, 2}, {1, 4}, {1, 2}, {1, 3}, {3, 5}}
	flink := map[int64]float64{1: 0.237, 2: 0.248, 3: 0.173, 4: 0.175, 5: 0.165}
	oracle := powerIteration(5, links, 3)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			got := Collect(pageRank(env, []int64{1, 2, 3, 4, 5}, links, 3))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			vals := got.Values()
			if len(vals) != 5 {
				t.Fatalf("%d ranks, want 5: %v", len(vals), vals)
			}
			for _, p := range vals {
				if math.Abs(p.Rank-flink[p.ID]) > 0.01 {
					t.Errorf("page %d: rank %.4f, Flink's %.3f", p.ID, p.Rank, flink[p.ID])
				}
				if math.Abs(p.Rank-oracle[p.ID]) > 1e-9 {
					t.Errorf("page %d: rank %.6f, the oracle's %.6f", p.ID, p.Rank, oracle[p.ID])
				}
			}
		})
	}
}

// TestPageRankRandomGraphs: on random graphs (a ring plus random links, so
// every page has in- and out-links), weir's ranks equal power iteration's
// after the same number of supersteps.
func TestPageRankRandomGraphs(t *testing.T) {
	for _, c := range configs {
		for _, size := range []int{10, 300} {
			t.Run(fmt.Sprintf("%s/%d", c.name, size), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(size), 7))
				var links []link
				pages := make([]int64, size)
				for v := 1; v <= size; v++ {
					pages[v-1] = int64(v)
					links = append(links, link{int64(v), int64(v%size + 1)})
				}
				for range size * 4 {
					links = append(links, link{r.Int64N(int64(size)) + 1, r.Int64N(int64(size)) + 1})
				}
				const k = 12
				oracle := powerIteration(size, links, k)
				env := newEnv(t, c)
				got := Collect(pageRank(env, pages, links, k))
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				vals := got.Values()
				if len(vals) != size {
					t.Fatalf("%d ranks, want %d", len(vals), size)
				}
				for _, p := range vals {
					if math.Abs(p.Rank-oracle[p.ID]) > 1e-9 {
						t.Fatalf("page %d: rank %.9f, the oracle's %.9f", p.ID, p.Rank, oracle[p.ID])
					}
				}
				if n := len(res.Iterations[0].Supersteps); n != k {
					t.Fatalf("%d supersteps, want %d", n, k)
				}
			})
		}
	}
}

// powerIteration is the oracle: ranks after k steps of
// r'(v) = (1-d)/N + d * sum over links u->v of r(u)/outdeg(u).
func powerIteration(n int, links []link, k int) []float64 {
	const d = 0.85
	out := make([]int, n+1)
	for _, l := range links {
		out[l.Src]++
	}
	r := make([]float64, n+1)
	for v := 1; v <= n; v++ {
		r[v] = 1 / float64(n)
	}
	for range k {
		nr := make([]float64, n+1)
		for v := 1; v <= n; v++ {
			nr[v] = (1 - d) / float64(n)
		}
		for _, l := range links {
			nr[l.Dst] += d * r[l.Src] / float64(out[l.Src])
		}
		r = nr
	}
	return r
}

type vertexComponent struct{ V, C int64 }

// connectedComponents is Flink's ConnectedComponents example: a delta
// iteration whose workset holds the vertices whose component changed.
func connectedComponents(env *Env, vertices []int64, edges []link, max int) *DataSet[vertexComponent] {
	vs := Map(FromSlice(env, vertices), func(v int64) vertexComponent { return vertexComponent{v, v} })
	both := FlatMap(FromSlice(env, edges), func(l link, emit func(link)) {
		emit(l)
		emit(link{l.Dst, l.Src})
	})
	return IterateDelta(vs, vs, func(x vertexComponent) int64 { return x.V }, max,
		func(it *DeltaIteration[vertexComponent, int64], ws *DataSet[vertexComponent]) (*DataSet[vertexComponent], *DataSet[vertexComponent]) {
			cands := Join(ws, both, func(x vertexComponent) int64 { return x.V }, func(l link) int64 { return l.Src },
				func(x *vertexComponent, l *link) vertexComponent { return vertexComponent{l.Dst, x.C} })
			mins := GroupBy(cands, func(x vertexComponent) int64 { return x.V }).
				Reduce(func(a, b vertexComponent) vertexComponent { return vertexComponent{a.V, min(a.C, b.C)} })
			delta := JoinSolution(mins, it, func(x vertexComponent) int64 { return x.V },
				func(w *vertexComponent, sol *vertexComponent, emit func(vertexComponent)) {
					if sol != nil && w.C < sol.C {
						emit(*w)
					}
				})
			return delta, delta
		})
}

// unionFind is the oracle of connected components: every vertex's smallest
// reachable vertex.
func unionFind(vertices []int64, edges []link) map[int64]int64 {
	parent := map[int64]int64{}
	var find func(int64) int64
	find = func(x int64) int64 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, v := range vertices {
		parent[v] = v
	}
	for _, l := range edges {
		a, b := find(l.Src), find(l.Dst)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	out := map[int64]int64{}
	for _, v := range vertices {
		out[v] = find(v)
	}
	// union by smaller root keeps every root the minimum of its set
	return out
}

func randomGraph(seed uint64, n, m int) ([]int64, []link) {
	r := rand.New(rand.NewPCG(seed, 3))
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = int64(i + 1)
	}
	ls := make([]link, m)
	for i := range ls {
		ls[i] = link{r.Int64N(int64(n)) + 1, r.Int64N(int64(n)) + 1}
	}
	return vs, ls
}

// TestConnectedComponents: the delta iteration equals union-find on random
// graphs (many small components, and one giant one), with worksets that
// shrink to nothing, under every configuration, the tiny budget spilling the
// solution set.
func TestConnectedComponents(t *testing.T) {
	for _, c := range configs {
		for _, g := range []struct{ n, m int }{{0, 0}, {1, 0}, {50, 30}, {3000, 2000}, {1500, 4500}} {
			t.Run(fmt.Sprintf("%s/%d-%d", c.name, g.n, g.m), func(t *testing.T) {
				vs, ls := randomGraph(uint64(g.n+g.m), g.n, g.m)
				want := unionFind(vs, ls)
				env := newEnv(t, c)
				got := Collect(connectedComponents(env, vs, ls, 1000))
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				vals := got.Values()
				if len(vals) != len(vs) {
					t.Fatalf("%d vertices, want %d", len(vals), len(vs))
				}
				for _, x := range vals {
					if want[x.V] != x.C {
						t.Fatalf("vertex %d in component %d, want %d", x.V, x.C, want[x.V])
					}
				}
				steps := res.Iterations[0].Supersteps
				if len(steps) == 0 || steps[len(steps)-1].Records != 0 {
					t.Fatalf("supersteps %+v: the last workset is not empty", steps)
				}
				t.Logf("worksets: %v", worksets(steps))
				if spilled := steps[len(steps)-1].SolutionSpilled; c.memory > 0 && g.n >= 1000 && spilled == 0 {
					t.Fatalf("the solution set did not spill under a budget of %d bytes", c.memory)
				}
			})
		}
	}
}

func worksets(s []SuperstepStats) []int64 {
	out := make([]int64, len(s))
	for i, x := range s {
		out[i] = x.Records
	}
	return out
}

// TestIterateTermination: a termination criterion (TerminateWhenEmpty) and a
// convergence criterion on an aggregator end the iteration at the superstep a
// direct computation predicts; the aggregator's value reaches the next
// superstep.
func TestIterateTermination(t *testing.T) {
	xs := []int64{5, 3, 17, 0, 9}
	for _, c := range configs {
		t.Run(c.name+"/criterion", func(t *testing.T) {
			env := newEnv(t, c)
			res := Iterate(FromSlice(env, xs), 100, func(it *Iteration, p *DataSet[int64]) *DataSet[int64] {
				next := Map(p, func(x int64) int64 { return max(x-1, 0) })
				TerminateWhenEmpty(it, next.Filter(func(x int64) bool { return x > 0 }))
				return next
			})
			got := Collect(res)
			r, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// the largest value, 17, reaches 0 in superstep 17
			if n := len(r.Iterations[0].Supersteps); n != 17 {
				t.Fatalf("%d supersteps, want 17", n)
			}
			for _, s := range r.Iterations[0].Supersteps {
				if s.Records != int64(len(xs)) { // the partial solution's, not the criterion's
					t.Fatalf("superstep %d: %d records, want %d", s.Superstep, s.Records, len(xs))
				}
			}
			for _, v := range got.Values() {
				if v != 0 {
					t.Fatalf("value %d after the iteration, want 0", v)
				}
			}
		})
		t.Run(c.name+"/aggregator", func(t *testing.T) {
			env := newEnv(t, c)
			var seen []int64
			res := Iterate(FromSlice(env, xs), 100, func(it *Iteration, p *DataSet[int64]) *DataSet[int64] {
				sum := LoopSum[int64](it)
				it.ConvergeWhen(func(step int) bool {
					seen = append(seen, sum.Previous())
					return sum.Previous() == 0
				})
				return halveEach(p, sum, nil)
			})
			Collect(res)
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			// sums after each halving: 16, 7, 3, 1, 0
			want := []int64{2 + 1 + 8 + 0 + 4, 1 + 0 + 4 + 0 + 2, 0 + 0 + 2 + 0 + 1, 1 + 0, 0}
			if !slices.Equal(seen, want) {
				t.Fatalf("aggregated sums %v, want %v", seen, want)
			}
		})
	}
}

// TestIterateRejoin: the partial solution read twice by branches that meet
// again (a join of the next values with the current ones, Flink's PageRank
// termination criterion) runs without deadlock and gives the direct answer.
func TestIterateRejoin(t *testing.T) {
	type kv struct{ K, V int64 }
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			xs := make([]kv, 3000)
			for i := range xs {
				xs[i] = kv{int64(i), int64(i % 7)}
			}
			res := Iterate(FromSlice(env, xs), 5, func(it *Iteration, p *DataSet[kv]) *DataSet[kv] {
				doubled := Map(p, func(x kv) kv { return kv{x.K, x.V * 2} })
				// next = doubled + current, joined back on the key
				return Join(doubled, p, func(x kv) int64 { return x.K }, func(x kv) int64 { return x.K },
					func(a, b *kv) kv { return kv{a.K, a.V + b.V} })
			})
			got := Collect(res)
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			vals := got.Values()
			if len(vals) != len(xs) {
				t.Fatalf("%d records, want %d", len(vals), len(xs))
			}
			for _, x := range vals {
				if want := (x.K % 7) * 243; x.V != want { // tripled five times
					t.Fatalf("key %d: %d, want %d", x.K, x.V, want)
				}
			}
		})
	}
}

// TestIterateInputReadAfterLoop: a data set read by the step (replayed every
// superstep) and, after the iteration, by an operator that broadcasts the
// iteration's result (k-means assigns the points to the final centroids).
// The loop reads the points to the end before its result exists, so the
// operator after the loop must not make their producer wait: no deadlock,
// whatever the size and parallelism.
func TestIterateInputReadAfterLoop(t *testing.T) {
	for _, c := range configs {
		for _, n := range []int{10, 20000} {
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				env := newEnv(t, c)
				xs := make([]int64, n)
				for i := range xs {
					xs[i] = int64(i)
				}
				points := FromSlice(env, xs)
				shift := Iterate(FromSlice(env, []int64{0}), 3, func(it *Iteration, s *DataSet[int64]) *DataSet[int64] {
					// the step reads points: the largest point, plus the shift
					m := MapWithBroadcast(s, points, func(v int64, ps []int64) int64 { return v + int64(len(ps)) })
					return m
				})
				out := MapWithBroadcast(points, shift, func(p int64, sh []int64) int64 { return p + sh[0] })
				got := Collect(out)
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				vals := got.Values()
				slices.Sort(vals)
				if len(vals) != n || vals[0] != int64(3*n) || vals[n-1] != int64(3*n+n-1) {
					t.Fatalf("got %d values from %v, want %d from %d", len(vals), vals[:min(3, len(vals))], n, 3*n)
				}
			})
		}
	}
}

// TestIterateReleasesEachSuperstep: what a superstep's operators reserve
// (here a Reduce's combiner and final table, under a budget) is released when
// the superstep ends, so the peak memory of 40 supersteps is that of 2, not
// twenty times it; and the sums stay right.
func TestIterateReleasesEachSuperstep(t *testing.T) {
	peak := func(n int) int64 {
		env := New(Options{Parallelism: 2, Memory: 64 << 20, TmpDir: t.TempDir()})
		xs := make([]keyedSum, 20000)
		for i := range xs {
			xs[i] = keyedSum{K: int64(i % 5000), Sum: 1, N: 1}
		}
		res := Iterate(FromSlice(env, xs), n, func(it *Iteration, p *DataSet[keyedSum]) *DataSet[keyedSum] {
			sums := GroupBy(p, func(x keyedSum) int64 { return x.K }).
				Reduce(func(a, b keyedSum) keyedSum { return keyedSum{a.K, a.Sum + b.Sum, a.N + b.N} })
			// four records a key again, each a quarter of the sum plus one
			return FlatMap(sums, func(s keyedSum, emit func(keyedSum)) {
				for range 4 {
					emit(keyedSum{K: s.K, Sum: s.Sum/4 + 1, N: 1})
				}
			})
		})
		got := Collect(res)
		r, err := env.Execute(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := int64(1 + n) // every superstep adds one to each record
		if len(got.Values()) != len(xs) {
			t.Fatalf("%d supersteps: %d records, want %d", n, len(got.Values()), len(xs))
		}
		for _, v := range got.Values() {
			if v.Sum != want {
				t.Fatalf("%d supersteps: key %d sums to %d, want %d", n, v.K, v.Sum, want)
			}
		}
		return r.Metrics.PeakMemory
	}
	two, forty := peak(2), peak(40)
	t.Logf("peak memory: %d bytes after 2 supersteps, %d after 40", two, forty)
	if forty > 2*two {
		t.Fatalf("peak memory %d after 40 supersteps, %d after 2: supersteps keep what they reserved", forty, two)
	}
}

// TestReplayShippedOnce: a loop-invariant input that a CoGroup in the step
// reads (replayed every superstep) is partitioned once, on its way into the
// replayer, and the CoGroup reads the replayer forward; with the invariant
// input at another parallelism than the loop, and broadcast to a Cross. The
// results equal a closed form at every configuration: each superstep adds to
// every key the sum of its static values.
func TestReplayShippedOnce(t *testing.T) {
	type kv struct{ K, V int64 }
	for _, c := range configs {
		for _, staticPar := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/static-p%d", c.name, staticPar), func(t *testing.T) {
				env := newEnv(t, c)
				xs := make([]kv, 2000)
				for i := range xs {
					xs[i] = kv{int64(i), 0}
				}
				var st []kv // key k has values 1..k%4
				for k := range int64(2000) {
					for v := int64(1); v <= k%4; v++ {
						st = append(st, kv{k, v})
					}
				}
				static := FromSlice(env, st).WithParallelism(staticPar)
				one := FromSlice(env, []int64{1}).WithParallelism(staticPar)
				const steps = 4
				res := Iterate(FromSlice(env, xs), steps, func(it *Iteration, p *DataSet[kv]) *DataSet[kv] {
					key := func(x kv) int64 { return x.K }
					added := CoGroup(p, static, key, key, func(k int64, ps iter.Seq[kv], ss iter.Seq[kv], emit func(kv)) {
						var add int64
						for s := range ss {
							add += s.V
						}
						for x := range ps {
							emit(kv{x.K, x.V + add})
						}
					})
					// times one, from a broadcast invariant input
					return Map(Cross(added, one, func(a *kv, b *int64) kv { return kv{a.K, a.V * *b} }), func(x kv) kv { return x })
				})
				got := Collect(res)
				if _, err := env.Plan(); err != nil { // planning twice plans the same
					t.Fatal(err)
				}
				r, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				vals := got.Values()
				if len(vals) != len(xs) {
					t.Fatalf("%d records, want %d", len(vals), len(xs))
				}
				for _, x := range vals {
					m := x.K % 4
					if want := steps * m * (m + 1) / 2; x.V != want {
						t.Fatalf("key %d: %d, want %d", x.K, x.V, want)
					}
				}
				if c.parallelism == 1 {
					return // every edge is forward
				}
				for _, n := range r.Plan.Nodes {
					if !strings.HasPrefix(n.Name, "Replay ") {
						continue
					}
					if n.Decision.Ship[0] == optimizer.Forward {
						t.Errorf("%s: its input is forward; the exchange should move in front of it", n.Name)
					}
					if n.Parallelism != c.parallelism {
						t.Errorf("%s: parallelism %d, want the loop's %d", n.Name, n.Parallelism, c.parallelism)
					}
				}
				for _, n := range r.Plan.Nodes {
					for i, in := range n.Inputs {
						if strings.HasPrefix(in.Name, "Replay ") && n.Decision.Ship[i] != optimizer.Forward {
							t.Errorf("%s reads %s by %s, want forward", n.Name, in.Name, n.Decision.Ship[i])
						}
					}
				}
			})
		}
	}
}

// halveEach halves every value of p, adding each partition's sum of the
// halves to sum; before, if set, runs at the start of every partition.
func halveEach(p *DataSet[int64], sum *LoopAggregator[int64], before func()) *DataSet[int64] {
	return MapPartition(p, func(vals iter.Seq[int64], emit func(int64)) {
		if before != nil {
			before()
		}
		var s int64
		for x := range vals {
			x /= 2
			s += x
			emit(x)
		}
		sum.Add(s)
	})
}
