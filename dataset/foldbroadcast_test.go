package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// foldSum is an accumulator with a slice: the sum and the sum of squares of
// N values.
type foldSum struct {
	S []int64
	N int64
}

func (s *foldSum) add(v, sq, n int64) {
	if s.S == nil {
		s.S = make([]int64, 2)
	}
	s.S[0] += v
	s.S[1] += sq
	s.N += n
}

func mergeFoldSum(s *foldSum, o foldSum) { s.add(o.S[0], o.S[1], o.N) }

// bucket is the number of bounds at most v: v's key for FoldWithBroadcast.
func bucket(v int64, bounds []int64) int64 {
	k := int64(0)
	for _, b := range bounds {
		if b <= v {
			k++
		}
	}
	return k
}

// foldLine is a group as the tests compare them: "key sum squares n".
func foldLine(k any, sum, sq, n int64) string { return fmt.Sprintf("%v %d %d %d", k, sum, sq, n) }

// foldCase is an input of TestFoldWithBroadcast: the values and bounds, the
// key the oracle gives a value, and the fold under test.
type foldCase struct {
	name   string
	vals   []int64
	bounds []int64
	key    func(v int64, bs []int64) string
	run    func(t *testing.T, env *Env, ds, bs *DataSet[int64]) ([]string, *Result)
}

// TestFoldWithBroadcast: the groups of a fold keyed and folded against a
// broadcast set equal a plain Go loop's, for small integer keys (the dense
// table), negative ones and strings (its map), one hot key among many, empty
// inputs, and more groups than a subtask holds at once (it hands partial
// groups on: under the tiny budget more often than without one).
func TestFoldWithBroadcast(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	vals := make([]int64, 20000)
	for i := range vals {
		vals[i] = r.Int64N(10000) - 2000
	}
	skewed := make([]int64, 20000)
	for i := range skewed {
		skewed[i] = 42
		if i%10 == 0 {
			skewed[i] = r.Int64N(10000)
		}
	}
	bounds := []int64{-1000, 0, 50, 3000, 7000}
	fold := func(s *foldSum, v int64, _ []int64) { s.add(v, v*v, 1) }
	byBucket := func(t *testing.T, env *Env, ds, bs *DataSet[int64]) ([]string, *Result) {
		return foldGroupsOf(t, env, FoldWithBroadcast(ds, bs, bucket, fold, mergeFoldSum))
	}
	byValue := func(t *testing.T, env *Env, ds, bs *DataSet[int64]) ([]string, *Result) {
		return foldGroupsOf(t, env, FoldWithBroadcast(ds, bs, func(v int64, bs []int64) int64 { return v + slices.Min(bs) }, fold, mergeFoldSum))
	}
	bucketKey := func(v int64, bs []int64) string { return fmt.Sprint(bucket(v, bs)) }
	// the broadcast set comes in any order: keys depend on it as a set
	valueKey := func(v int64, bs []int64) string { return fmt.Sprint(v + slices.Min(bs)) }
	cases := []foldCase{
		{"dense", vals, bounds, bucketKey, byBucket},
		{"negative", vals, bounds, func(v int64, bs []int64) string { return fmt.Sprint(-bucket(v, bs)) },
			func(t *testing.T, env *Env, ds, bs *DataSet[int64]) ([]string, *Result) { // int8 keys, negative but 0: the map
				return foldGroupsOf(t, env, FoldWithBroadcast(ds, bs, func(v int64, bs []int64) int8 { return int8(-bucket(v, bs)) }, fold, mergeFoldSum))
			}},
		{"string", vals, bounds, func(v int64, bs []int64) string { return fmt.Sprintf("b%d", bucket(v, bs)) },
			func(t *testing.T, env *Env, ds, bs *DataSet[int64]) ([]string, *Result) {
				return foldGroupsOf(t, env, FoldWithBroadcast(ds, bs, func(v int64, bs []int64) string { return fmt.Sprintf("b%d", bucket(v, bs)) }, fold, mergeFoldSum))
			}},
		{"many", vals, bounds, valueKey, byValue}, // ~8,600 groups, more than foldGroups
		{"skewed", skewed, bounds, valueKey, byValue},
		{"empty", nil, bounds, bucketKey, byBucket},
		{"empty-broadcast", vals, nil, bucketKey, byBucket},
	}
	for _, fc := range cases {
		sums := map[string][3]int64{}
		for _, v := range fc.vals {
			k := fc.key(v, fc.bounds)
			w := sums[k]
			sums[k] = [3]int64{w[0] + v, w[1] + v*v, w[2] + 1}
		}
		var want []string
		for k, w := range sums {
			want = append(want, foldLine(k, w[0], w[1], w[2]))
		}
		slices.Sort(want)
		for _, c := range configs {
			t.Run(fc.name+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				got, res := fc.run(t, env, FromSlice(env, fc.vals), FromSlice(env, fc.bounds))
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("%d groups, want %d; first %q, want %q", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
				}
				if fc.name != "many" || c.memory == 0 {
					return
				}
				unbounded := newEnv(t, config{"unbounded", c.parallelism, 0})
				_, free := fc.run(t, unbounded, FromSlice(unbounded, fc.vals), FromSlice(unbounded, fc.bounds))
				if tiny, all := foldOut(t, res), foldOut(t, free); tiny <= all {
					t.Errorf("the fold handed %d partial groups on under %d bytes, %d without a budget", tiny, c.memory, all)
				}
			})
		}
	}
}

// foldOut returns the records the fold of FoldWithBroadcast emitted.
func foldOut(t *testing.T, res *Result) int64 {
	t.Helper()
	for _, v := range res.Metrics.Vertices {
		if strings.Contains(v.Name, "FoldWithBroadcast (fold)") { // the last operator of its chain
			return v.Total().RecordsOut
		}
	}
	t.Fatalf("no fold among the vertices of the plan:\n%s", res.Plan.Text())
	return 0
}

// foldGroupsOf runs env and returns the groups of out (foldLine) and the
// result.
func foldGroupsOf[K comparable](t *testing.T, env *Env, out *DataSet[KV[K, foldSum]]) ([]string, *Result) {
	t.Helper()
	c := Collect(out)
	res := execute(t, env)
	if plan := res.Plan.Text(); strings.Contains(plan, "combine") {
		t.Errorf("a combiner after the fold:\n%s", plan)
	}
	var got []string
	for _, kv := range c.Values() {
		got = append(got, foldLine(kv.Key, kv.Value.S[0], kv.Value.S[1], kv.Value.N))
	}
	return got, res
}

func execute(t *testing.T, env *Env) *Result {
	t.Helper()
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// foldCentres runs one-dimensional Lloyd iterations over integer points with
// integer means, in plain Go: the oracle of TestFoldWithBroadcastIteration.
func foldCentres(points []int64, centres []int64, supersteps int) []int64 {
	for range supersteps {
		sums := map[int64][2]int64{}
		for _, p := range points {
			k := nearestCentre(p, centres)
			s := sums[k]
			sums[k] = [2]int64{s[0] + p, s[1] + 1}
		}
		var next []int64
		for _, s := range sums {
			next = append(next, s[0]/s[1])
		}
		slices.Sort(next)
		centres = next
	}
	return centres
}

// nearestCentre returns the centre nearest p, the least on ties.
func nearestCentre(p int64, cs []int64) int64 {
	best, bd := cs[0], int64(-1)
	for _, c := range cs {
		d := (p - c) * (p - c)
		if bd < 0 || d < bd || d == bd && c < best {
			best, bd = c, d
		}
	}
	return best
}

// point is a record with a slice, as a loop-invariant input.
type point struct{ X []int64 }

// foldIteration is the iteration of TestFoldWithBroadcastIteration: integer
// Lloyd over points, the centres broadcast and the points folded from the
// operator's cache every superstep.
func foldIteration(env *Env, points []point, centres []int64, supersteps int) *DataSet[int64] {
	ps := FromSlice(env, points)
	return Iterate(FromSlice(env, centres), supersteps, func(_ *Iteration, cs *DataSet[int64]) *DataSet[int64] {
		sums := FoldWithBroadcast(ps, cs,
			func(p point, cs []int64) int64 { return nearestCentre(p.X[0], cs) },
			func(s *foldSum, p point, _ []int64) { s.add(p.X[0], 0, 1) },
			mergeFoldSum)
		return Map(sums, func(kv KV[int64, foldSum]) int64 { return kv.Value.S[0] / kv.Value.N })
	})
}

// TestFoldWithBroadcastIteration: in a bulk iteration the fold keeps its
// loop-invariant input itself (no replayer in the plan; spilled under the
// tiny budget, and only then) and gives a plain Go loop's centres at every
// superstep count, for points larger than a segment among them and for no
// points.
func TestFoldWithBroadcastIteration(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	raw := make([]int64, 6000)
	points := make([]point, len(raw))
	for i := range raw {
		raw[i] = r.Int64N(1000) + 1000*r.Int64N(4)
		x := make([]int64, 8) // 65 bytes encoded: 390 KB of points, more than the tiny budget
		if i%500 == 7 {
			x = make([]int64, 600) // more than a 4 KiB segment
		}
		x[0], x[1] = raw[i], int64(i)
		points[i] = point{X: x}
	}
	centres := []int64{0, 1, 2, 3, 4}
	for _, in := range []struct {
		name   string
		raw    []int64
		points []point
	}{{"points", raw, points}, {"empty", nil, nil}} {
		for _, steps := range []int{1, 6} {
			want := foldCentres(in.raw, centres, steps)
			for _, c := range configs {
				t.Run(fmt.Sprintf("%s/steps%d/%s", in.name, steps, c.name), func(t *testing.T) {
					env := newEnv(t, c)
					got := Collect(foldIteration(env, in.points, centres, steps))
					res := execute(t, env)
					vals := got.Values()
					slices.Sort(vals)
					if !slices.Equal(vals, want) {
						t.Fatalf("centres %v, want %v", vals, want)
					}
					plan := res.Plan.Text()
					if strings.Contains(plan, "Replay") || !strings.Contains(plan, "FoldWithBroadcast (fold)") {
						t.Fatalf("the fold does not keep its loop-invariant input:\n%s", plan)
					}
					if spilled := foldSpilled(t, res); (spilled > 0) != (c.memory > 0 && len(in.points) > 0) {
						t.Errorf("the fold spilled %d bytes under a budget of %d bytes (0: none)", spilled, c.memory)
					}
				})
			}
		}
	}
}

// foldSpilled returns the bytes the task of the fold of FoldWithBroadcast
// spilled.
func foldSpilled(t *testing.T, res *Result) int64 {
	t.Helper()
	for _, v := range res.Metrics.Vertices {
		if strings.Contains(v.Name, "FoldWithBroadcast (fold)") {
			return v.Total().Spilled
		}
	}
	t.Fatalf("no fold among the vertices of the plan:\n%s", res.Plan.Text())
	return 0
}

// TestFoldWithBroadcastAllocs: a superstep of the fold allocates nothing per
// record: ten more supersteps over 20,000 points cost far fewer allocations
// than points (a fold that made a record, or a combiner that copied one,
// per point would cost at least one each).
func TestFoldWithBroadcastAllocs(t *testing.T) {
	points := make([]point, 20000)
	for i := range points {
		points[i] = point{X: []int64{int64(i % 4000), int64(i)}}
	}
	mallocs := func(steps int) uint64 {
		env := New(Options{Parallelism: 2, TmpDir: t.TempDir()})
		got := Collect(foldIteration(env, points, []int64{0, 1000, 2000, 3000}, steps))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		execute(t, env)
		runtime.ReadMemStats(&after)
		if len(got.Values()) != 4 {
			t.Fatalf("centres %v, want 4", got.Values())
		}
		return after.Mallocs - before.Mallocs
	}
	mallocs(2) // warm up
	short, long := mallocs(2), mallocs(12)
	perStep := (float64(long) - float64(short)) / 10
	if perStep > float64(len(points))/20 {
		t.Fatalf("%.0f allocations per superstep over %d points", perStep, len(points))
	}
	t.Logf("%.0f allocations per superstep over %d points", perStep, len(points))
}
