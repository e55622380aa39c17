package dataset

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
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

