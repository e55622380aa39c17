package dataset

import (
	"slices"
	"testing"
)

// TestBallotRoundTrip: votes and verdicts decode to what was encoded.
func TestBallotRoundTrip(t *testing.T) {
	for _, m := range []*ballot{
		{loop: 0, step: 1, counts: []int64{0, 5}, aggs: [][]byte{{1, 2}, {}}},
		{verdict: true, more: true, loop: 3, step: 70000, counts: []int64{-1, 1 << 40}, aggs: [][]byte{}},
		{verdict: true, loop: 1, step: 2, failure: "dataset: boom", counts: []int64{}, aggs: [][]byte{}},
	} {
		got, err := decodeBallot(m.encode())
		if err != nil {
			t.Fatal(err)
		}
		if !sameBallot(got, m) {
			t.Fatalf("decoded %+v, want %+v", got, m)
		}
	}
}

// FuzzBallot: any bytes decode without a panic, and what decodes encodes
// to bytes that decode to the same ballot (not always the same bytes: a
// varint may come longer than it needs).
func FuzzBallot(f *testing.F) {
	f.Add((&ballot{loop: 2, step: 9, counts: []int64{3}, aggs: [][]byte{{7}}}).encode())
	f.Add((&ballot{verdict: true, failure: "x"}).encode())
	f.Add([]byte{4})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeBallot(b)
		if err != nil {
			return
		}
		again, err := decodeBallot(m.encode())
		if err != nil {
			t.Fatalf("%x decoded to %+v, whose encoding does not decode: %v", b, m, err)
		}
		if !sameBallot(again, m) {
			t.Fatalf("%x decoded to %+v, whose encoding decodes to %+v", b, m, again)
		}
	})
}

func sameBallot(a, b *ballot) bool {
	return a.verdict == b.verdict && a.more == b.more && a.loop == b.loop && a.step == b.step && a.failure == b.failure &&
		slices.Equal(a.counts, b.counts) && slices.EqualFunc(a.aggs, b.aggs, slices.Equal)
}
