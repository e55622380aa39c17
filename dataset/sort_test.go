package dataset

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/weirdata/weir/internal/golden"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// sortRec is the record of the sort tests: a key k and a payload.
type sortRec struct{ K, V int64 }

func sortKey(r sortRec) int64 { return r.K }

// sortPlan builds FromSlice -> Map -> Sort (or SortPartition) by k, the
// source and the sort at the given parallelisms. With declared the source
// declares its subtasks sorted on "k" in order (desc: descending) and the
// map forwards "k"; the sort's key is named "k" (other: "j").
func sortPlan(env *Env, in []sortRec, srcPar, sortPar int, declared, desc, partition, other bool) *DataSet[sortRec] {
	src := FromSlice(env, in).WithParallelism(srcPar)
	if in == nil {
		src = src.WithEstimate(100_000)
	}
	if declared {
		o := Ascending
		if desc {
			o = Descending
		}
		src = src.SortedOn(o, "k")
	}
	m := Map(src, func(r sortRec) sortRec { return r }).Forwards("k")
	var s *DataSet[sortRec]
	if partition {
		s = SortPartition(m, sortKey, Ascending)
	} else {
		s = Sort(m, sortKey, Ascending)
	}
	name := "k"
	if other {
		name = "j"
	}
	return s.On(name).WithParallelism(sortPar)
}

// TestSortPlansGolden compares the plans of sorts over inputs with and
// without a declared order with testdata/sort_plans.txt.
func TestSortPlansGolden(t *testing.T) {
	golden.RunFile(t, filepath.Join("testdata", "sort_plans.txt"), func(t *testing.T, d *golden.Case) string {
		arg := func(k string) int {
			v, err := strconv.Atoi(d.Args[k])
			if err != nil {
				t.Fatalf("%s: %s: %v", d.Pos, k, err)
			}
			return v
		}
		flag := func(k string) bool { _, ok := d.Arg(k); return ok }
		env := New(Options{Parallelism: 2, Memory: 64 << 20})
		switch d.Cmd {
		case "sort", "sort-partition":
			Collect(sortPlan(env, nil, arg("source"), arg("sort"), flag("declared"), flag("desc"), d.Cmd == "sort-partition", flag("other")))
		default:
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		}
		p, err := env.Plan()
		if err != nil {
			t.Fatal(err)
		}
		return p.Text()
	})
}

// TestSortOfSortedInput runs sorts the planner finds sorted already (they
// pass their input through) against slices.SortFunc, at every budget and
// batch size of configs, and a wrong declaration, which fails the job.
func TestSortOfSortedInput(t *testing.T) {
	const n = 5000
	in := make([]sortRec, n)
	for i := range in {
		in[i] = sortRec{K: int64(i / 3), V: int64(i)}
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, c)
			total := Collect(sortPlan(env, in, 1, 1, true, false, false, false))
			// FromSlice gives each subtask a contiguous run: each is sorted
			parts := Collect(sortPlan(env, in, c.parallelism, c.parallelism, true, false, true, false))
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := total.Values(); !slices.Equal(got, in) {
				t.Fatalf("Sort: %d records, want the %d in order", len(got), len(in))
			}
			got := slices.Clone(parts.Values())
			slices.SortFunc(got, func(a, b sortRec) int { return cmp.Compare(a.V, b.V) })
			if !slices.Equal(got, in) {
				t.Fatalf("SortPartition: %d records, want the %d", len(got), len(in))
			}
			for _, nd := range res.Plan.Nodes {
				if nd.Kind != optimizer.Sort {
					continue
				}
				if nd.Decision.InputLocal[0] != optimizer.LocalNone || nd.Actual == nil || nd.Actual.Variant != "sorted-input" {
					t.Errorf("%s: input local %v, variant %v; want it passed through\n%s", nd.Name, nd.Decision.InputLocal, nd.Actual, res.Plan.Text())
				}
			}
		})
	}
	// descending data declared ascending
	rev := slices.Clone(in)
	slices.Reverse(rev)
	env := New(Options{Parallelism: 2})
	Collect(sortPlan(env, rev, 1, 1, true, false, false, false))
	if _, err := env.Execute(context.Background()); !errors.Is(err, sortjoin.ErrUnsortedInput) {
		t.Errorf("a wrong declaration: err = %v, want sortjoin.ErrUnsortedInput", err)
	}
}
