package dataset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// sortGroupPlanner plans with CostBased, then makes every Reduce a sorted
// grouping with the given input local strategy: the only way to get a
// sorted grouping over input the planner would hash (a test hook).
type sortGroupPlanner struct{ local optimizer.InputLocal }

func (s sortGroupPlanner) Plan(p *optimizer.Plan) error {
	if err := (optimizer.CostBased{}).Plan(p); err != nil {
		return err
	}
	for _, n := range p.Nodes {
		if n.Kind == optimizer.Reduce {
			n.Decision.Local = optimizer.SortGroup
			n.Decision.InputLocal = []optimizer.InputLocal{s.local}
		}
	}
	return nil
}

type srRec struct {
	Key  string
	N    int64
	Text string
}

// srFold sums N and keeps the greatest Text: associative and commutative.
func srFold(a, b srRec) srRec {
	a.N += b.N
	a.Text = max(a.Text, b.Text)
	return a
}

func srKey(r srRec) string { return r.Key }

func srOracle(in []srRec) map[string]srRec {
	out := map[string]srRec{}
	for _, r := range in {
		if g, ok := out[r.Key]; ok {
			out[r.Key] = srFold(g, r)
		} else {
			out[r.Key] = r
		}
	}
	return out
}

func srInputs() []struct {
	name string
	recs []srRec
} {
	r := rand.New(rand.NewPCG(3, 4))
	var skewed, many, long []srRec
	for range 6000 {
		k := "hot"
		if r.IntN(10) == 0 { // one key has 90% of the records
			k = fmt.Sprintf("cold-%d", r.IntN(300))
		}
		skewed = append(skewed, srRec{k, int64(r.IntN(1000)), fmt.Sprintf("t%05d", r.IntN(100000))})
	}
	for range 20000 {
		many = append(many, srRec{fmt.Sprintf("k%04d", r.IntN(3000)), int64(r.IntN(1000) - 500), fmt.Sprintf("t%d", r.IntN(1000))})
	}
	for i := range 60 { // records (and some keys) larger than a 4 KiB segment
		k := fmt.Sprintf("g%d", i%5)
		if i%3 == 0 {
			k = strings.Repeat("K", 4500) + k
		}
		long = append(long, srRec{k, int64(i), strings.Repeat(string(rune('a'+r.IntN(26))), 5000+r.IntN(4000))})
	}
	return []struct {
		name string
		recs []srRec
	}{{"empty", nil}, {"skewed", skewed}, {"many", many}, {"long", long}}
}

// srProgram builds the variant's program over recs and returns the Reduce's
// output.
func srProgram(env *Env, variant string, recs []srRec) *Collected[srRec] {
	src := FromSlice(env, recs)
	var in *DataSet[srRec]
	switch variant {
	case "sorted-partition": // hashed and sorted on the key: the Reduce streams
		in = SortPartition(PartitionByHash(src, srKey).On("key"), srKey, Ascending).On("key")
	case "sort-merge-join": // joined on the key by a sort-merge join: the Reduce streams
		var keys []srRec
		for k := range srOracle(recs) {
			keys = append(keys, srRec{Key: k})
		}
		in = Join(src, FromSlice(env, keys), srKey, srKey, func(l *srRec, _ *srRec) srRec { return *l }).
			WithJoinHint(optimizer.RepartitionSortMerge).On("key").Forwards("key")
	default: // forced-sort: as the planner forces it
		in = src
	}
	if len(recs) == 0 {
		// with nothing estimated every strategy costs nothing, and the planner
		// keeps the first, a hash aggregation: declare a size
		src.WithEstimate(1000)
	}
	return Collect(GroupBy(in, srKey).On("key").Reduce(srFold))
}

func TestSortedReduceEqualsOracle(t *testing.T) {
	variants := []struct {
		name    string
		planner optimizer.Planner
		local   optimizer.InputLocal
		ship    optimizer.Ship
	}{
		{"forced-sort", sortGroupPlanner{optimizer.LocalSort}, optimizer.LocalSort, optimizer.Hash},
		{"sorted-partition", nil, optimizer.LocalNone, optimizer.Forward},
		{"sort-merge-join", nil, optimizer.LocalNone, optimizer.Forward},
	}
	configs := []config{{"p1", 1, 0}, {"p3", 3, 0}, {"p1-tiny-memory", 1, 96 << 10}, {"p3-tiny-memory", 3, 96 << 10}}
	if testing.Short() {
		configs = []config{configs[0], configs[3]}
	}
	for _, in := range srInputs() {
		want := srOracle(in.recs)
		for _, v := range variants {
			for _, c := range configs {
				t.Run(in.name+"/"+v.name+"/"+c.name, func(t *testing.T) {
					env := newEnv(t, c)
					if v.planner != nil {
						env.opts.Planner = v.planner
					}
					got := srProgram(env, v.name, in.recs)
					res, err := env.Execute(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					var red *optimizer.Node
					for _, n := range res.Plan.Nodes {
						if n.Kind == optimizer.Reduce {
							red = n
						}
					}
					d := red.Decision
					if d.Local != optimizer.SortGroup || d.InputLocal[0] != v.local || d.Ship[0] != v.ship {
						t.Fatalf("Reduce: local=%s input local=%v ship=%v, want SORT_GROUP, %s, %s\n%s",
							d.Local, d.InputLocal, d.Ship, v.local, v.ship, res.Plan.Text())
					}
					spilled := red.Actual.Spilled
					switch {
					case v.local == optimizer.LocalNone && spilled != 0:
						t.Errorf("the streaming grouping's task spilled %d bytes", spilled)
					case v.local == optimizer.LocalSort && c.memory > 0 && (in.name == "many" || in.name == "long") && spilled == 0:
						t.Errorf("the sort of %s did not spill with a %d-byte budget", in.name, c.memory)
					}
					vals := got.Values()
					if c.parallelism == 1 && !slices.IsSortedFunc(vals, func(a, b srRec) int { return cmp.Compare(a.Key, b.Key) }) {
						t.Errorf("one subtask's groups are not in key order")
					}
					checkGroups(t, vals, want, func(g srRec) string { return g.Key }, func(g srRec) srRec { return g })
				})
			}
		}
	}
}

// TestSortedReduceFlat runs the sorted grouping over flat records (no
// strings), sorted and streamed.
func TestSortedReduceFlat(t *testing.T) {
	type pair struct{ K, V int64 }
	r := rand.New(rand.NewPCG(5, 6))
	var recs []pair
	want := map[int64]int64{}
	for range 30000 {
		p := pair{int64(r.IntN(5000)), int64(r.IntN(100))}
		recs = append(recs, p)
		want[p.K] += p.V
	}
	key := func(p pair) int64 { return p.K }
	sum := func(a, b pair) pair { a.V += b.V; return a }
	for _, c := range []config{{"p1", 1, 0}, {"p3-tiny-memory", 3, 96 << 10}} {
		for _, forced := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/forced=%v", c.name, forced), func(t *testing.T) {
				env := newEnv(t, c)
				in := FromSlice(env, recs)
				if forced {
					env.opts.Planner = sortGroupPlanner{optimizer.LocalSort}
				} else {
					in = SortPartition(PartitionByHash(in, key).On("k"), key, Ascending).On("k")
				}
				got := Collect(GroupBy(in, key).On("k").Reduce(sum))
				executeSortGroup(t, env)
				checkGroups(t, got.Values(), want, key, func(p pair) int64 { return p.V })
			})
		}
	}
}

// TestSortedReduceRefusesUnsortedStream forces streaming over input that is
// not sorted: the grouping fails instead of emitting a key twice, and leaves
// no spill file behind (newEnv checks).
// executeSortGroup runs env's program and fails the test unless it ran and
// its plan holds a sorted grouping.
func executeSortGroup(t *testing.T, env *Env) {
	t.Helper()
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Plan.Text(), "local=SORT_GROUP") {
		t.Fatalf("no sorted grouping:\n%s", res.Plan.Text())
	}
}

func TestSortedReduceRefusesUnsortedStream(t *testing.T) {
	env := newEnv(t, config{"p2-tiny-memory", 2, 96 << 10})
	env.opts.Planner = sortGroupPlanner{optimizer.LocalNone}
	recs := srInputs()[2].recs // "many", in random order
	Collect(GroupBy(FromSlice(env, recs), srKey).Reduce(srFold))
	_, err := env.Execute(context.Background())
	if !errors.Is(err, sortjoin.ErrUnsortedInput) {
		t.Fatalf("err = %v, want ErrUnsortedInput", err)
	}
}

// TestSortedReduceInIteration runs a sorted grouping (local sort) inside a
// bulk iteration's step, once per superstep, against a naive simulation.
func TestSortedReduceInIteration(t *testing.T) {
	type kv struct{ K, V int64 }
	const keys, steps, mod = 200, 6, 1_000_003
	var initial []kv
	cur := make([]int64, keys)
	for k := range int64(keys) {
		initial = append(initial, kv{k, k + 1})
		cur[k] = k + 1
	}
	for range steps { // every key gets its own value plus its predecessor's
		next := make([]int64, keys)
		for k := range cur {
			next[k] = (cur[k] + cur[(k+keys-1)%keys]) % mod
		}
		cur = next
	}
	for _, c := range []config{{"p1", 1, 0}, {"p3-tiny-memory", 3, 96 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			env.opts.Planner = sortGroupPlanner{optimizer.LocalSort}
			out := Iterate(FromSlice(env, initial), steps, func(_ *Iteration, p *DataSet[kv]) *DataSet[kv] {
				spread := FlatMap(p, func(x kv, emit func(kv)) {
					emit(x)
					emit(kv{(x.K + 1) % keys, x.V})
				})
				return GroupBy(spread, func(x kv) int64 { return x.K }).Reduce(func(a, b kv) kv { return kv{a.K, (a.V + b.V) % mod} })
			})
			got := Collect(out)
			executeSortGroup(t, env)
			vals := got.Values()
			if len(vals) != keys {
				t.Fatalf("%d keys, want %d", len(vals), keys)
			}
			for _, x := range vals {
				if x.V != cur[x.K] {
					t.Fatalf("key %d: %d, want %d", x.K, x.V, cur[x.K])
				}
			}
		})
	}
}

// TestSortedReduceFailureRemovesSpill fails the task of a sorted grouping in
// the middle of its walk, after its sort spilled: Execute reports the panic
// and no spill file is left (newEnv checks).
func TestSortedReduceFailureRemovesSpill(t *testing.T) {
	env := newEnv(t, config{"p2-tiny-memory", 2, 96 << 10})
	env.opts.Planner = sortGroupPlanner{optimizer.LocalSort}
	reduced := GroupBy(FromSlice(env, srInputs()[2].recs), srKey).Reduce(srFold)
	Collect(Map(reduced, func(r srRec) srRec { // chained into the grouping's task
		if r.Key == "k1500" {
			panic("boom")
		}
		return r
	}))
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the panic", err)
	}
}
