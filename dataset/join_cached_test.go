package dataset

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// entry is a record of a loop-invariant table; some names are longer than a
// memory segment of the tests' environments. Its slice makes it deep (not
// memory.Codec.Shallow): a typed table holds copies made through its codec.
type entry struct {
	K    int64
	Add  int64
	Name string
	Tags []int64
}

type acc struct{ K, V int64 }

func byEntry(e entry) int64 { return e.K }
func byAcc(a acc) int64     { return a.K }

// mix folds a table entry into an accumulator, reading the whole name.
func mix(s *entry, a *acc) acc {
	if s == nil {
		return acc{a.K, a.V*3 + 1}
	}
	v := a.V*3 + s.Add + int64(len(s.Name)) + int64(s.Name[len(s.Name)-1])
	for i, x := range s.Tags {
		v += int64(i+1) * x
	}
	return acc{a.K, v}
}

// staticTable has keys 0..n-1 but the multiples of 7 (missing), key 0 three
// times and key 1 twice (skew), and names up to 9000 bytes.
func staticTable(n int) []entry {
	var es []entry
	for k := range int64(n) {
		if k%7 == 6 {
			continue
		}
		copies := 1
		switch k {
		case 0:
			copies = 3
		case 1:
			copies = 2
		}
		for c := range copies {
			size := 1 + int(k*13+int64(c))%40
			if k%50 == 3 {
				size = 9000
			}
			tags := make([]int64, (k+int64(c))%4)
			for i := range tags {
				tags[i] = k*100 + int64(i)
			}
			es = append(es, entry{K: k, Add: k*10 + int64(c), Name: strings.Repeat(string(rune('a'+(k+int64(c))%26)), size), Tags: tags})
		}
	}
	return es
}

// naiveStatic is the oracle: the same step by nested loops.
func naiveStatic(table []entry, cur []acc, outer bool) []acc {
	var out []acc
	for i := range cur {
		found := false
		for j := range table {
			if table[j].K == cur[i].K {
				found = true
				out = append(out, mix(&table[j], &cur[i]))
			}
		}
		if !found && outer {
			out = append(out, mix(nil, &cur[i]))
		}
	}
	return out
}

// TestStaticJoinSides: a join inside a bulk iteration whose loop-invariant
// input is either side, inner or outer on the dynamic side, keeps that input
// across supersteps (as Go values when it fits, else in the spilling index)
// and gives, superstep after superstep, what nested loops give.
func TestStaticJoinSides(t *testing.T) {
	const steps = 3
	for _, c := range configs {
		for _, n := range []int{0, 40, 400} {
			for _, mode := range []string{"inner-static-left", "outer-static-left", "inner-static-right", "outer-static-right"} {
				t.Run(fmt.Sprintf("%s/%d/%s", c.name, n, mode), func(t *testing.T) {
					table := staticTable(n)
					var initial []acc
					for k := range int64(n + 5) { // keys past the table's too
						initial = append(initial, acc{k, k})
					}
					want := initial
					outer := strings.HasPrefix(mode, "outer")
					for range steps {
						want = naiveStatic(table, want, outer)
					}
					env := newEnv(t, c)
					tab := FromSlice(env, table)
					res := Iterate(FromSlice(env, initial), steps, func(it *Iteration, cur *DataSet[acc]) *DataSet[acc] {
						swap := func(a *acc, s *entry) acc { return mix(s, a) }
						switch mode {
						case "inner-static-left":
							return Join(tab, cur, byEntry, byAcc, mix)
						case "outer-static-left":
							return RightOuterJoin(tab, cur, byEntry, byAcc, mix)
						case "inner-static-right":
							return Join(cur, tab, byAcc, byEntry, swap)
						default:
							return LeftOuterJoin(cur, tab, byAcc, byEntry, swap)
						}
					})
					got := Collect(res)
					if _, err := env.Execute(context.Background()); err != nil {
						t.Fatal(err)
					}
					order := func(a, b acc) int { return cmp.Or(cmp.Compare(a.K, b.K), cmp.Compare(a.V, b.V)) }
					vals := got.Values()
					slices.SortFunc(vals, order)
					slices.SortFunc(want, order)
					if !slices.Equal(vals, want) {
						t.Fatalf("%d records, want %d; first differences: %v", len(vals), len(want), firstAccDiff(vals, want))
					}
				})
			}
		}
	}
}

func firstAccDiff(got, want []acc) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d got %v, want %v", i, got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}
