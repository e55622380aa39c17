package source

import (
	"fmt"
	"slices"
	"testing"
)

// splitsInOrder concatenates the records of the splits named kind 0, kind 1, ...
func splitsInOrder[T any](res result[T], kind string) []T {
	var out []T
	for i := 0; ; i++ {
		recs, ok := res.bySplit[fmt.Sprintf("%s %d", kind, i)]
		if !ok {
			return out
		}
		out = append(out, recs...)
	}
}

func TestFromSliceWhole(t *testing.T) {
	for _, n := range []int{0, 1, 5, 100} {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprint("item", i)
		}
		for _, p := range []int{1, 2, 3, 7, 150} {
			for _, batch := range []int{1, 3, 1024} {
				res := readWhole(t, FromSlice(items, BatchSize(batch)), p)
				if got := splitsInOrder(res, "slice"); !slices.Equal(got, items) {
					t.Fatalf("n=%d p=%d batch=%d: got %v", n, p, batch, head(got))
				}
				if len(res.ended) != min(n, p) {
					t.Fatalf("n=%d p=%d: %d splits ended, want %d", n, p, len(res.ended), min(n, p))
				}
			}
		}
	}
}

func TestFromSliceResume(t *testing.T) {
	items := []int{5, 3, 8, 1, 9, 2, 7}
	checkResumeEvery(t, FromSlice(items, BatchSize(1)), items)
}

func TestFromSliceRejectsForeignSplit(t *testing.T) {
	_, rs := newReaders(t, FromSlice([]int{1, 2}), 1, nil)
	rs[0].AddSplits([]Split{{ID: "slice 0", Offset: 1, Len: 5}})
	if _, err := nextRecords(t.Context(), rs[0], 1); err == nil {
		t.Fatal("a split past the slice's end was read")
	}
}

func TestFromSeq(t *testing.T) {
	want := []string{"a", "b", "c", "d", "e"}
	seq := slices.Values(want)
	for _, p := range []int{1, 3} {
		res := readWhole(t, FromSeq(seq, BatchSize(2)), p)
		if !slices.Equal(res.bySplit["seq"], want) {
			t.Fatalf("p=%d: got %v", p, res.bySplit["seq"])
		}
	}
	checkResumeEvery(t, FromSeq(seq, BatchSize(1)), want)
}
