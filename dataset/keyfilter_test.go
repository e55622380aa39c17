package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/optimizer"
)

// kfLine is the probe side of the runtime filter tests, read from Parquet.
type kfLine struct {
	Key  int64  `parquet:"k" weir:"k"`
	Val  int64  `parquet:"v" weir:"v"`
	Note string `parquet:"s" weir:"s"`
}

type kfDim struct {
	Key  int32
	Name string
}

// writeLines writes lines to a Parquet file of several row groups.
func writeLines(t *testing.T, lines []kfLine) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lines.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[kfLine](f, pq.MaxRowsPerRowGroup(3000))
	if _, err := w.Write(lines); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKeyColumnsFilter checks joins whose probe side's Parquet source is
// filtered by the build side's keys (KeyColumns): inner, semi, outer and anti
// joins (the latter two probing the side they do not keep),
// broadcast and repartitioned build sides, skewed probe keys, a build side
// with sparse keys (the hash set), an empty one and one over maxFilterKeys,
// across the configurations. The results must equal a nested-loop join of
// the same rows; the source's removed rows must equal the probe rows no key
// matches (when the filter runs), which the analyzed plan shows.
func TestKeyColumnsFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	lines := make([]kfLine, 20000)
	for i := range lines {
		k := int64(r.IntN(2000))
		if i%3 == 0 {
			k = 7 // skew: a third of the rows share a key
		}
		lines[i] = kfLine{Key: k, Val: int64(i), Note: fmt.Sprint("n", i%17)}
	}
	path := writeLines(t, lines)
	dims := func(keys ...int32) []kfDim {
		var out []kfDim
		for _, k := range keys {
			out = append(out, kfDim{Key: k, Name: fmt.Sprint("d", k)})
		}
		return out
	}
	var fewKeys, sparseKeys []int32
	for k := int32(0); k < 2000; k += 37 {
		fewKeys = append(fewKeys, k)
	}
	for k := int32(0); k < 40; k++ {
		sparseKeys = append(sparseKeys, k*k*k*997) // wide apart: a hash set, not a bitmap
	}
	few, sparse := dims(fewKeys...), dims(append(sparseKeys, 7, 1999)...)
	absent := dims(slices.Concat(fewKeys, []int32{5000, 6001, -3})...) // three keys no line has
	type pair struct {
		Val  int64
		Name string
	}
	for _, tc := range []struct {
		name     string
		dims     []kfDim
		hint     JoinHint
		kind     string // inner, semi, leftouter-dims (dims left: lines are the probe side, not kept)
		maxKeys  int
		filtered bool
	}{
		{"broadcast", few, BroadcastHashSecond, "inner", 0, true},
		{"repartitioned", few, RepartitionHashSecond, "inner", 0, true},
		{"sparse-keys", sparse, BroadcastHashSecond, "inner", 0, true},
		{"semi", few, BroadcastHashSecond, "semi", 0, true},
		{"outer-dims", few, RepartitionHashFirst, "leftouter-dims", 0, true},
		{"anti-dims", absent, RepartitionHashFirst, "anti-dims", 0, true},
		{"empty-build", nil, BroadcastHashSecond, "inner", 0, true},
		{"too-many-keys", few, BroadcastHashSecond, "inner", 10, false},
	} {
		inDims := map[int64]string{}
		for _, d := range tc.dims {
			inDims[int64(d.Key)] = d.Name
		}
		var want []pair
		matched := 0
		for _, l := range lines {
			if name, ok := inDims[l.Key]; ok {
				want = append(want, pair{l.Val, name})
				matched++
			}
		}
		if tc.kind == "semi" {
			for i := range want {
				want[i].Name = ""
			}
		}
		if tc.kind == "anti-dims" {
			want = nil
		}
		if tc.kind == "leftouter-dims" || tc.kind == "anti-dims" {
			seen := map[int64]bool{}
			for _, l := range lines {
				seen[l.Key] = true
			}
			for _, d := range tc.dims {
				if !seen[int64(d.Key)] {
					want = append(want, pair{-1, d.Name})
				}
			}
		}
		for _, c := range configs {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				if tc.maxKeys > 0 {
					defer func(m int) { maxFilterKeys = m }(maxFilterKeys)
					maxFilterKeys = tc.maxKeys
				}
				env := newEnv(t, c)
				src, err := parquet.Open[kfLine](path)
				if err != nil {
					t.Fatal(err)
				}
				ls := FromSource(env, "lines", src)
				ds := FromSlice(env, tc.dims)
				lkey := func(l kfLine) int64 { return l.Key }
				dkey := func(d kfDim) int64 { return int64(d.Key) }
				var out *DataSet[pair]
				switch tc.kind {
				case "inner":
					out = Join(ls, ds, lkey, dkey, func(l *kfLine, d *kfDim) pair { return pair{l.Val, d.Name} }).
						WithJoinHint(tc.hint).KeyColumns("k", "")
				case "semi":
					out = Map(SemiJoin(ls, ds, lkey, dkey).WithJoinHint(tc.hint).KeyColumns("k", ""),
						func(l kfLine) pair { return pair{Val: l.Val} })
				case "anti-dims": // the dims no line has: lines are the probe side, none kept
					out = Map(AntiJoin(ds, ls, dkey, lkey).WithJoinHint(tc.hint).KeyColumns("", "k"),
						func(d kfDim) pair { return pair{-1, d.Name} })
				case "leftouter-dims":
					out = LeftOuterJoin(ds, ls, dkey, lkey, func(d *kfDim, l *kfLine) pair {
						if l == nil {
							return pair{-1, d.Name}
						}
						return pair{l.Val, d.Name}
					}).WithJoinHint(tc.hint).KeyColumns("", "k")
				}
				got := Collect(out)
				res, err := env.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				cmp := func(a, b pair) int {
					if a.Val != b.Val {
						return int(a.Val - b.Val)
					}
					return strings.Compare(a.Name, b.Name)
				}
				g := slices.Clone(got.Values())
				slices.SortFunc(g, cmp)
				slices.SortFunc(want, cmp)
				if !slices.Equal(g, want) {
					t.Fatalf("%d results, want %d (first differing: %s)", len(g), len(want), firstPairDiff(g, want))
				}
				var source *optimizer.Node
				for _, n := range res.Plan.Nodes {
					if n.Kind == optimizer.Source && strings.HasPrefix(n.Name, "Read lines") {
						source = n
					}
				}
				a := source.Actual
				switch {
				case tc.filtered && (a.KeyFilter != "k" || a.KeyFiltered != int64(len(lines)-matched)):
					t.Errorf("source: key filter %q removed %d rows, want k and %d\n%s", a.KeyFilter, a.KeyFiltered, len(lines)-matched, res.Plan.Text())
				case tc.filtered && !strings.Contains(res.Plan.Text(), fmt.Sprintf("key-filter=k removed=%d", len(lines)-matched)):
					t.Errorf("the plan does not show the filter:\n%s", res.Plan.Text())
				case !tc.filtered && a.KeyFiltered != 0:
					t.Errorf("source: %d rows removed without a filter", a.KeyFiltered)
				}
			})
		}
	}
}

func firstPairDiff[T comparable](a, b []T) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %v against %v", i, a[i], b[i])
		}
	}
	return "a prefix"
}

// TestKeyColumnsUnfiltered checks the joins KeyColumns must leave
// unfiltered, where filtering would change the result: an anti join, an
// outer join whose probe side keeps its unmatched rows, a source read by
// two operators. Each result equals the one without the declaration.
func TestKeyColumnsUnfiltered(t *testing.T) {
	lines := make([]kfLine, 5000)
	for i := range lines {
		lines[i] = kfLine{Key: int64(i % 100), Val: int64(i)}
	}
	path := writeLines(t, lines)
	dims := []kfDim{{Key: 3}, {Key: 50}}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			src, err := parquet.Open[kfLine](path)
			if err != nil {
				t.Fatal(err)
			}
			lkey := func(l kfLine) int64 { return l.Key }
			dkey := func(d kfDim) int64 { return int64(d.Key) }
			anti := Count(AntiJoin(FromSource(env, "anti", src), FromSlice(env, dims), lkey, dkey).
				WithJoinHint(BroadcastHashSecond).KeyColumns("k", ""))
			outer := Count(LeftOuterJoin(FromSource(env, "outer", src), FromSlice(env, dims), lkey, dkey,
				func(l *kfLine, _ *kfDim) int64 { return l.Val }).WithJoinHint(BroadcastHashSecond).KeyColumns("k", ""))
			shared := FromSource(env, "shared", src)
			two := Count(Join(shared, FromSlice(env, dims), lkey, dkey, func(l *kfLine, _ *kfDim) int64 { return l.Val }).
				WithJoinHint(BroadcastHashSecond).KeyColumns("k", ""))
			all := Count(shared)
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if anti.N() != 4900 || outer.N() != 5000 || two.N() != 100 || all.N() != 5000 {
				t.Errorf("anti %d, outer %d, join %d, all %d; want 4900, 5000, 100, 5000", anti.N(), outer.N(), two.N(), all.N())
			}
			for _, n := range res.Plan.Nodes {
				if a := n.Actual; a.KeyFilter != "" {
					t.Errorf("%s has a key filter", n.Name)
				}
			}
		})
	}
}

// TestKeyColumnsErrors checks the declarations Execute refuses.
func TestKeyColumnsErrors(t *testing.T) {
	path := writeLines(t, []kfLine{{Key: 1}})
	lkey := func(l kfLine) int64 { return l.Key }
	for _, tc := range []struct {
		name  string
		build func(env *Env, src *parquet.Source[kfLine])
		want  string
	}{
		{"not-a-join", func(env *Env, src *parquet.Source[kfLine]) {
			Count(Map(FromSource(env, "l", src), lkey).KeyColumns("k", ""))
		}, "is not a join"},
		{"string-key", func(env *Env, src *parquet.Source[kfLine]) {
			Count(Join(FromSource(env, "l", src), FromSource(env, "r", src), func(l kfLine) string { return l.Note },
				func(l kfLine) string { return l.Note }, func(a, _ *kfLine) int64 { return a.Val }).KeyColumns("s", ""))
		}, "the join key is not an integer type"},
		{"not-a-source", func(env *Env, src *parquet.Source[kfLine]) {
			m := Map(FromSource(env, "l", src), func(l kfLine) kfLine { return l })
			Count(Join(m, FromSource(env, "r", src), lkey, lkey, func(a, _ *kfLine) int64 { return a.Val }).KeyColumns("k", ""))
		}, "input 0 (Map at"},
		{"slice", func(env *Env, src *parquet.Source[kfLine]) {
			Count(Join(FromSource(env, "l", src), FromSlice(env, []kfLine{}), lkey, lkey, func(a, _ *kfLine) int64 { return a.Val }).KeyColumns("", "k"))
		}, "input 1 (FromSlice at"},
		{"string-column", func(env *Env, src *parquet.Source[kfLine]) {
			Count(Join(FromSource(env, "l", src), FromSource(env, "r", src), lkey, lkey, func(a, _ *kfLine) int64 { return a.Val }).KeyColumns("s", ""))
		}, `key column "s" is not an integer column`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, configs[0])
			src, err := parquet.Open[kfLine](path)
			if err != nil {
				t.Fatal(err)
			}
			tc.build(env, src)
			_, err = env.Execute(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "KeyColumns at keyfilter_test.go") {
				t.Errorf("error %v, want one from KeyColumns saying %q", err, tc.want)
			}
		})
	}
}

// TestKeySet checks the bitmap and the hash set against a map, with
// negative keys, repeats and the extremes of int64.
func TestKeySet(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		name string
		keys []int64
	}{
		{"empty", nil},
		{"dense", func() []int64 {
			var k []int64
			for i := range 5000 {
				k = append(k, int64(i*3-4000), int64(i*3-4000))
			}
			return k
		}()},
		{"sparse", func() []int64 {
			var k []int64
			for range 3000 {
				k = append(k, r.Int64()-r.Int64())
			}
			return append(k, -1<<63, 1<<63-1, 0)
		}()},
		{"one", []int64{-9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newKeySet(tc.keys)
			in := map[int64]bool{}
			for _, k := range tc.keys {
				in[k] = true
			}
			vals := slices.Clone(tc.keys)
			for range 20000 {
				vals = append(vals, r.Int64N(40000)-20000, r.Int64()-r.Int64())
			}
			vals = append(vals, -1<<63, 1<<63-1, 0, 1, -1)
			sel := make([]int32, len(vals))
			for i := range sel {
				sel[i] = int32(i)
			}
			got := s.Keep(vals, sel)
			var want []int32
			for i, v := range vals {
				if in[v] {
					want = append(want, int32(i))
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("kept %d rows, want %d", len(got), len(want))
			}
			if tc.name == "dense" && s.span == 0 || tc.name == "sparse" && s.span != 0 {
				t.Errorf("%s keys in a set of span %d", tc.name, s.span)
			}
		})
	}
}

// TestKeyColumnsBuildFails checks that a join whose build input fails does
// not leave its probe source waiting for the filter: Execute returns the
// build side's error.
func TestKeyColumnsBuildFails(t *testing.T) {
	path := writeLines(t, []kfLine{{Key: 1}, {Key: 2}})
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			src, err := parquet.Open[kfLine](path)
			if err != nil {
				t.Fatal(err)
			}
			dims := make([]kfDim, 500)
			for i := range dims {
				dims[i] = kfDim{Key: int32(i)}
			}
			bad := MapErr(FromSlice(env, dims), func(d kfDim) (kfDim, error) {
				if d.Key == 400 {
					return d, fmt.Errorf("dimension %d is broken", d.Key)
				}
				return d, nil
			})
			Count(Join(FromSource(env, "lines", src), bad, func(l kfLine) int64 { return l.Key },
				func(d kfDim) int64 { return int64(d.Key) }, func(l *kfLine, _ *kfDim) int64 { return l.Val }).
				WithJoinHint(RepartitionHashSecond).KeyColumns("k", ""))
			if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "dimension 400 is broken") {
				t.Fatalf("error %v, want the build side's", err)
			}
		})
	}
}
