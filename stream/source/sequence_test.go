package source

import (
	"context"
	"io"
	"slices"
	"testing"
)

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		total uint64
		n     int
		want  [][2]uint64
	}{
		{10, 3, [][2]uint64{{0, 4}, {4, 3}, {7, 3}}},
		{2, 3, [][2]uint64{{0, 1}, {1, 1}}},
		{0, 2, nil},
		{6, 1, [][2]uint64{{0, 6}}},
		{7, 0, [][2]uint64{{0, 7}}},
	} {
		if got := ranges(tc.total, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("ranges(%d, %d) = %v, want %v", tc.total, tc.n, got, tc.want)
		}
	}
}

func TestSequenceWhole(t *testing.T) {
	for _, r := range [][2]int64{{0, 0}, {-5, 5}, {177, 563}} {
		var want []int64
		for i := r[0]; i <= r[1]; i++ {
			want = append(want, i)
		}
		for _, p := range []int{1, 2, 4, 1000} {
			src, err := Sequence(r[0], r[1], BatchSize(50))
			if err != nil {
				t.Fatal(err)
			}
			res := readWhole(t, src, p)
			if got := splitsInOrder(res, "sequence"); !slices.Equal(got, want) {
				t.Fatalf("%v p=%d: got %v", r, p, head(got))
			}
		}
	}
	if _, err := Sequence(3, 2); err == nil {
		t.Fatal("Sequence(3, 2) did not fail")
	}
}

func TestSequenceResume(t *testing.T) {
	src, err := Sequence(-3, 9, BatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for i := int64(-3); i <= 9; i++ {
		want = append(want, i)
	}
	checkResumeEvery(t, src, want)
}

// noSplits is an enumerator that has nothing to give.
type noSplits struct{}

func (noSplits) Request(int) (Grant, error) { return Grant{Status: NoMore}, nil }

// TestSequenceReaderCheckpoints follows Flink's
// NumberSequenceSourceTest.testReaderCheckpoints: two splits [177, 333] and
// [334, 563] added to a reader, which is snapshotted and recreated from its
// positions every (563-177)/3 records; the output is 177..563 in order.
func TestSequenceReaderCheckpoints(t *testing.T) {
	const from, mid, to = 177, 333, 563
	const perCycle = (to - from) / 3
	src, err := Sequence(0, 0, BatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	newR := func(splits []Split) Reader[int64] {
		r, err := src.Reader(ReaderContext{Parallelism: 1, Splits: noSplits{}})
		if err != nil {
			t.Fatal(err)
		}
		r.AddSplits(splits)
		return r
	}
	r := newR([]Split{
		{ID: "split-1", Offset: from, Len: mid - from + 1},
		{ID: "split-2", Offset: mid + 1, Len: to - mid},
	})
	var got []int64
	left := perCycle
	for {
		b, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b.Records...)
		if left -= len(b.Records); left <= 0 {
			left = perCycle
			pos := roundTrip(t, r.Positions())
			r.Close()
			r = newR(pos)
		}
	}
	r.Close()
	if len(got) != to-from+1 {
		t.Fatalf("got %d numbers, want %d", len(got), to-from+1)
	}
	for i, v := range got {
		if v != from+int64(i) {
			t.Fatalf("number %d is %d, want %d", i, v, from+int64(i))
		}
	}
}
