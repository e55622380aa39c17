package oracle

import (
	"math"
	"testing"
)

// flinkLinks is the 5-page link data of Flink's PageRank tests, pages 1..5
// renamed to 0..4.
func flinkLinks() [][2]int64 {
	links := [][2]int64{{2, 1}, {5, 2}, {5, 4}, {4, 3}, {4, 2}, {1, 4}, {1, 2}, {1, 3}, {3, 5}}
	for i := range links {
		links[i][0]--
		links[i][1]--
	}
	return links
}

func TestPageRankFlinkData(t *testing.T) {
	got := PageRank(5, flinkLinks(), 0.85, 3)
	want := []float64{0.237, 0.248, 0.173, 0.175, 0.165}
	for v := range want {
		if math.Abs(got[v]-want[v]) > 0.01 {
			t.Errorf("page %d: rank %.4f, want %.3f", v+1, got[v], want[v])
		}
	}
	// one step by hand: page 1's only in-link is page 2 (out-degree 1), so
	// rank'(1) = 0.15/5 + 0.85 * 0.2.
	if one := PageRank(5, flinkLinks(), 0.85, 1); math.Abs(one[0]-(0.03+0.85*0.2)) > 1e-15 {
		t.Errorf("after one step page 1 has %v, want %v", one[0], 0.03+0.85*0.2)
	}
	if zero := PageRank(5, flinkLinks(), 0.85, 0); zero[3] != 0.2 {
		t.Errorf("after no step page 4 has %v, want 1/5", zero[3])
	}
}

func TestPageRankDangling(t *testing.T) {
	// 0 -> 1 and 1 dangling; 2 isolated. One step: 0 and 2 have no in-links,
	// 1 gets all of 0's rank; 1's rank leaks.
	got := PageRank(3, [][2]int64{{0, 1}}, 0.8, 1)
	base := 0.2 / 3
	want := []float64{base, base + 0.8/3, base}
	for v := range want {
		if math.Abs(got[v]-want[v]) > 1e-15 {
			t.Errorf("vertex %d: %v, want %v", v, got[v], want[v])
		}
	}
	// duplicate edges count twice: 0 -> 1 twice and 0 -> 2 once
	got = PageRank(3, [][2]int64{{0, 1}, {0, 1}, {0, 2}}, 0.5, 1)
	if r1, r2 := got[1], got[2]; math.Abs(r1-(0.5/3+0.5*2.0/9)) > 1e-15 || math.Abs(r2-(0.5/3+0.5/9)) > 1e-15 {
		t.Errorf("duplicates: ranks %v", got)
	}
}

func TestPageRankConverged(t *testing.T) {
	const eps = 1e-9
	ranks, steps := PageRankConverged(5, flinkLinks(), 0.85, eps, 1000)
	if steps < 10 || steps >= 1000 {
		t.Fatalf("converged after %d steps", steps)
	}
	// the answer is (nearly) a fixed point: one more step moves no rank by much
	next := PageRank(5, flinkLinks(), 0.85, steps+1)
	for v := range ranks {
		if math.Abs(next[v]-ranks[v]) > eps {
			t.Errorf("page %d moves by %g after convergence", v+1, next[v]-ranks[v])
		}
	}
	// and it is PageRank with that many steps, whose last step moved no rank
	// by more than eps while the step before did
	same := PageRank(5, flinkLinks(), 0.85, steps)
	prev := PageRank(5, flinkLinks(), 0.85, steps-1)
	prev2 := PageRank(5, flinkLinks(), 0.85, steps-2)
	last, before := 0.0, 0.0
	for v := range ranks {
		if same[v] != ranks[v] {
			t.Errorf("page %d: %v, PageRank gives %v", v+1, ranks[v], same[v])
		}
		last = max(last, math.Abs(same[v]-prev[v]))
		before = max(before, math.Abs(prev[v]-prev2[v]))
	}
	if last > eps || before <= eps {
		t.Errorf("stopped after step %d, which moved ranks by %g; the step before moved them by %g", steps, last, before)
	}
	// with no cap left, it stops at the cap
	if _, s := PageRankConverged(5, flinkLinks(), 0.85, eps, 4); s != 4 {
		t.Errorf("cap 4: ran %d steps", s)
	}
}

func TestPageRankBadVertex(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("vertex 3 of 3: no panic")
		}
	}()
	PageRank(3, [][2]int64{{0, 3}}, 0.85, 1)
}
