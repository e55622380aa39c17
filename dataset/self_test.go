package dataset

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/text"
	"github.com/weirdata/weir/optimizer"
)

func TestSelfKeyerIsRaw(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  bool
		k    func() (*keyer[string], error)
	}{
		{"Self ascending", true, func() (*keyer[string], error) { return newSortKeyer(Self[string](), Ascending) }},
		{"Self descending", false, func() (*keyer[string], error) { return newSortKeyer(Self[string](), Descending) }},
		{"identity closure", false, func() (*keyer[string], error) {
			return newSortKeyer(func(s string) string { return s }, Ascending)
		}},
	} {
		k, err := tc.k()
		if err != nil {
			t.Fatal(err)
		}
		if got := k.Raw != nil; got != tc.raw {
			t.Errorf("%s: raw keyer %v, want %v", tc.name, got, tc.raw)
		}
	}
	kb, err := newSortKeyer(Self[[]byte](), Ascending)
	if err != nil || kb.Raw == nil {
		t.Errorf("Self[[]byte]() ascending: raw %v, err %v", kb != nil && kb.Raw != nil, err)
	}
}

// sortWhole sorts ds by the whole record from generic code, as a user's
// helper would: Self[T]() here is the same value as Self[string]() at the
// call site.
func sortWhole[T any](ds *DataSet[T], o Order) *DataSet[T] {
	return Sort(ds, Self[T](), o)
}

// sortKeyed sorts ds by key from generic code: the selector travels through
// an interface and a type parameter before Sort sees it.
func sortKeyed[T, K any](ds *DataSet[T], key any) *DataSet[T] {
	return Sort(ds, key.(func(T) K), Ascending)
}

// TestSelfThroughGenericHelper checks that a Self key reaches Sort's identity
// path (the self-key variant in EXPLAIN ANALYZE) whichever generic code
// passes it, that an identity function of the user's own does not, and that
// every sort equals slices.Sort.
func TestSelfThroughGenericHelper(t *testing.T) {
	vals := nastyStrings(3, 2000)
	want := slices.Clone(vals)
	slices.Sort(want)
	for _, tc := range []struct {
		name string
		self bool
		sort func(*DataSet[string]) *DataSet[string]
	}{
		{"Self at the call site", true, func(ds *DataSet[string]) *DataSet[string] { return Sort(ds, Self[string](), Ascending) }},
		{"Self[T] in a generic helper", true, func(ds *DataSet[string]) *DataSet[string] { return sortWhole(ds, Ascending) }},
		{"Self through an interface", true, func(ds *DataSet[string]) *DataSet[string] {
			return sortKeyed[string, string](ds, Self[string]())
		}},
		{"an identity function", false, func(ds *DataSet[string]) *DataSet[string] {
			return Sort(ds, func(s string) string { return s }, Ascending)
		}},
	} {
		cs := []config{allConfigs[0], allConfigs[3]}
		if testing.Short() {
			cs = cs[len(tc.name)%2:][:1] // one of the two per case
		}
		for _, c := range cs {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				got := Collect(tc.sort(FromSlice(env, vals)))
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Values(), want) {
					t.Fatalf("sorted %d values, want the %d of slices.Sort in its order", len(got.Values()), len(want))
				}
				var variant string
				for _, n := range res.Plan.Nodes {
					if n.Kind == optimizer.Sort {
						variant = n.Actual.Variant
					}
				}
				if (variant == "self-key") != tc.self {
					t.Errorf("the sort ran variant %q, want self-key %v", variant, tc.self)
				}
			})
		}
	}
	if isSelf(Self[[]byte]()) != true || isSelf(func(b []byte) []byte { return b }) {
		t.Errorf("isSelf tells Self[[]byte]() from an identity function wrongly")
	}
}

// nastyStrings returns n strings with duplicates, empty strings, shared
// prefixes, NUL and 0xff bytes, and some longer than a 4 KiB segment.
func nastyStrings(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 9))
	out := make([]string, n)
	for i := range out {
		switch r.IntN(8) {
		case 0:
		case 1:
			if i > 0 {
				out[i] = out[r.IntN(i)]
			}
		case 2:
			out[i] = strings.Repeat("x", 5000+r.IntN(3000)) // larger than a segment
		default:
			b := make([]byte, r.IntN(30))
			for j := range b {
				b[j] = "ab\x00\xff\n "[r.IntN(6)]
			}
			out[i] = "p" + string(b)
		}
	}
	return out
}

func TestSortSelf(t *testing.T) {
	for _, in := range []struct {
		name string
		vals []string
	}{
		{"empty", nil},
		{"nasty", nastyStrings(1, 3000)},
		{"one-value", slices.Repeat([]string{"same"}, 2000)},
	} {
		want := slices.Clone(in.vals)
		slices.Sort(want)
		for _, c := range configs {
			t.Run(in.name+"/"+c.name, func(t *testing.T) {
				env := newEnv(t, c)
				all := Collect(Sort(FromSlice(env, in.vals), Self[string](), Ascending))
				desc := Collect(Sort(FromSlice(env, in.vals), Self[string](), Descending))
				bs := make([][]byte, len(in.vals))
				for i, s := range in.vals {
					bs[i] = []byte(s)
				}
				byts := Collect(Sort(FromSlice(env, bs), Self[[]byte](), Ascending))
				if _, err := env.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				if got := all.Values(); !slices.Equal(got, want) {
					t.Fatalf("Sort(Self) ascending: %d values, want %d; or out of order", len(got), len(want))
				}
				rev := slices.Clone(want)
				slices.Reverse(rev)
				if got := desc.Values(); !slices.Equal(got, rev) {
					t.Fatalf("Sort(Self) descending differs from the reversed oracle")
				}
				gotb := byts.Values()
				if len(gotb) != len(want) {
					t.Fatalf("Sort(Self[[]byte]()): %d values, want %d", len(gotb), len(want))
				}
				for i := range want {
					if string(gotb[i]) != want[i] {
						t.Fatalf("Sort(Self[[]byte]()) value %d is %q, want %q", i, gotb[i], want[i])
					}
				}
			})
		}
	}
}

// TestSortSelfToTextSink covers the borrowed path: the sort hands a text
// sink lines that point into a buffer it reuses for the next batch.
func TestSortSelfToTextSink(t *testing.T) {
	vals := nastyStrings(2, 5000)
	for i := range vals {
		vals[i] = strings.ReplaceAll(vals[i], "\n", "n") // one record, one line
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			dir := t.TempDir()
			sorted := SortPartition(PartitionByRangeBounds(FromSlice(env, vals), Self[string](), rangeBoundsFor(vals, c.parallelism)), Self[string](), Ascending)
			Output(sorted, "lines", text.NewSink(filepath.Join(dir, "out")))
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			var got []string
			for p := range c.parallelism {
				path := filepath.Join(dir, "out")
				if c.parallelism > 1 {
					path = filepath.Join(path, fmt.Sprintf("part-%05d.txt", p))
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > 0 {
					got = append(got, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
				}
			}
			want := slices.Clone(vals)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("the parts in order hold %d lines, want the %d sorted values", len(got), len(want))
			}
		})
	}
}

// rangeBoundsFor returns p-1 bounds that cut the sorted vals into p ranges.
func rangeBoundsFor(vals []string, p int) []string {
	s := slices.Clone(vals)
	slices.Sort(s)
	bounds := make([]string, p-1)
	for i := range bounds {
		if len(s) > 0 {
			bounds[i] = s[len(s)*(i+1)/p]
		}
	}
	return bounds
}

func TestPartitionByRangeBounds(t *testing.T) {
	type rec struct {
		K int64
		V string
	}
	var in []rec
	for i := range 5000 {
		in = append(in, rec{int64(i*7919%1000 - 300), fmt.Sprint(i)})
	}
	bounds := []int64{-100, -100, 250} // an empty range between equal bounds
	env := newEnv(t, config{"p4", 4, 96 << 10})
	tagged := MapPartition(PartitionByRangeBounds(FromSlice(env, in), func(r rec) int64 { return r.K }, bounds),
		func(vals iter.Seq[rec], emit func([2]int64)) {
			lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
			for v := range vals {
				lo, hi = min(lo, v.K), max(hi, v.K)
			}
			emit([2]int64{lo, hi}) // the subtask's key range
		})
	got := Collect(tagged)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Oracle: subtask i gets bounds[i-1] < k <= bounds[i].
	want := map[[2]int64]bool{{-300, -100}: true, {math.MaxInt64, math.MinInt64}: true, {-99, 250}: true, {251, 699}: true}
	if len(got.Values()) != 4 {
		t.Fatalf("%d subtasks reported, want 4", len(got.Values()))
	}
	for _, r := range got.Values() {
		if !want[r] {
			t.Errorf("a subtask held keys %d..%d, not one of the ranges %v", r[0], r[1], want)
		}
	}

	for _, bad := range []struct {
		bounds []int64
		want   string
	}{
		{[]int64{1}, "1 bounds for 4 subtasks: want 3"},
		{[]int64{1, 3, 2}, "bounds[2] is less than bounds[1]"},
	} {
		env := New(Options{Parallelism: 4})
		Collect(PartitionByRangeBounds(FromSlice(env, in), func(r rec) int64 { return r.K }, bad.bounds))
		if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), bad.want) ||
			!strings.Contains(err.Error(), "PartitionByRange at self_test.go") {
			t.Errorf("bounds %v: err = %v, want one naming %q and the call", bad.bounds, err, bad.want)
		}
	}
}

func TestWithParallelism(t *testing.T) {
	env := newEnv(t, config{"p3", 3, 0})
	in := make([]int64, 1000)
	for i := range in {
		in[i] = int64(i % 10)
	}
	src := FromSlice(env, in).WithParallelism(1)
	doubled := Map(src, func(v int64) int64 { return 2 * v }) // inherits 1: chained
	sums := GroupBy(doubled, func(v int64) int64 { return v }).Reduce(func(a, b int64) int64 { return a + b })
	got := Collect(sums)
	plan, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p := plan.Nodes[0].Parallelism; p != 1 {
		t.Errorf("source parallelism %d, want 1", p)
	}
	if p := plan.Nodes[1].Parallelism; p != 1 {
		t.Errorf("map parallelism %d, want its input's 1", p)
	}
	if p := plan.Nodes[2].Parallelism; p != 3 {
		t.Errorf("reduce parallelism %d, want the program's 3", p)
	}
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	vals := slices.Sorted(slices.Values(got.Values()))
	want := []int64{0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800}
	if !slices.Equal(vals, want) {
		t.Errorf("sums %v, want %v", vals, want)
	}
	env = New(Options{Parallelism: 2})
	Collect(FromSlice(env, in).WithParallelism(0))
	if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "WithParallelism at self_test.go") {
		t.Errorf("parallelism 0: err = %v", err)
	}
}
