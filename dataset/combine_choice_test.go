package dataset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weirdata/weir/optimizer"
)

// TestReduceWithoutCombiner: a Reduce declared to keep about as many groups
// as it reads is planned without a combiner (its input is shuffled as it is),
// one declared to shrink it with one, and both give what a Go map gives, in
// every configuration.
func TestReduceWithoutCombiner(t *testing.T) {
	type kv struct{ K, V int64 }
	const n = 5000
	for _, c := range configs {
		for _, groups := range []int64{n / 2, 10} {
			t.Run(fmt.Sprintf("%s/groups%d", c.name, groups), func(t *testing.T) {
				var xs []kv
				want := map[int64]int64{}
				for i := range int64(n) {
					k := i % groups
					if i%3 == 0 {
						k = 0 // a skewed key
					}
					xs = append(xs, kv{k, i})
					want[k] += i
				}
				env := newEnv(t, c)
				sums := GroupBy(FromSlice(env, xs).WithEstimate(n), func(x kv) int64 { return x.K }).
					Reduce(func(a, b kv) kv { return kv{a.K, a.V + b.V} }).WithEstimate(groups)
				got := Collect(sums)
				p, err := env.Plan()
				if err != nil {
					t.Fatal(err)
				}
				var reduce *optimizer.Node
				for _, nd := range p.Nodes {
					if nd.Kind == optimizer.Reduce {
						reduce = nd
					}
				}
				wantCombine := groups < n/2 || c.parallelism == 1
				if d := reduce.Decision; c.parallelism > 1 && (d.Ship[0] != optimizer.Hash || d.Combine != wantCombine) {
					t.Fatalf("ship %v combine %v, want HASH and combine %v\n%s", d.Ship, d.Combine, wantCombine, p.Text())
				}
				if !wantCombine && !strings.Contains(p.Text(), "no combiner") {
					t.Errorf("the plan does not say why there is no combiner:\n%s", p.Text())
				}
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				checkGroups(t, got.Values(), want, func(x kv) int64 { return x.K }, func(x kv) int64 { return x.V })
			})
		}
	}
}
