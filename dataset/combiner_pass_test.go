package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/optimizer"
)

type passSum struct {
	Name string
	Sum  int64
}

// TestReduceCombinerPasses checks a Reduce whose combiner does not reduce:
// string keys (a hashing combiner) each seen once pass through it, which the
// analyzed plan shows, and the sums equal a map's; keys seen ten times, and
// distinct keys followed by repeated ones, keep it combining (or pass
// the repeats through) with the same sums; an empty input too.
func TestReduceCombinerPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	gen := func(n int, key func(i int) int) []passSum {
		vs := make([]passSum, n)
		for i := range vs {
			vs[i] = passSum{Name: fmt.Sprintf("key-%d", key(i)), Sum: int64(i)}
		}
		r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		return vs
	}
	n := 5 * typed.PassProbe
	then := append(gen(2*typed.PassProbe, func(i int) int { return i }), gen(n, func(i int) int { return i % 50 })...)
	const (
		never  = iota // no combiner passes its input through
		always        // every subtask's does (at parallelism > 1)
		either        // the order of records decides
	)
	for _, tc := range []struct {
		name   string
		in     []passSum
		passes int
	}{
		{"distinct", gen(n, func(i int) int { return i }), always},
		{"repeats", gen(n, func(i int) int { return i % (n / 10) }), never},
		{"distinct-then-repeats", then, either},
		{"empty", nil, never},
	} {
		want := map[string]int64{}
		for _, v := range tc.in {
			want[v.Name] += v.Sum
		}
		for _, c := range configs {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				sums := Collect(GroupBy(FromSlice(env, tc.in), func(v passSum) string { return v.Name }).
					Reduce(func(a, b passSum) passSum { return passSum{a.Name, a.Sum + b.Sum} }))
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				checkGroups(t, sums.Values(), want, func(v passSum) string { return v.Name }, func(v passSum) int64 { return v.Sum })
				var variant string
				for _, n := range res.Plan.Nodes {
					if n.Kind == optimizer.Reduce {
						variant = n.Actual.Variant
					}
				}
				passed := slices.Contains(strings.Split(variant, "+"), "combiner-passed-through")
				if tc.passes == always && c.parallelism > 1 && !passed {
					t.Errorf("variant %q: no combiner passed distinct keys through", variant)
				}
				if tc.passes == never && passed {
					t.Errorf("variant %q: a combiner passed through keys that repeat", variant)
				}
			})
		}
	}
}
