package source

import (
	"errors"
	"math"
	"testing"
)

func TestSplitBinaryRoundTrip(t *testing.T) {
	for _, s := range []Split{
		{},
		{ID: "a.txt", Offset: 17, Records: 3, Len: -1},
		{ID: "sequence 2", Offset: math.MinInt64, Records: math.MaxInt64, Len: 0},
		{ID: "héllo\x00world", Offset: math.MaxInt64, Records: 0, Len: math.MaxInt64},
	} {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got Split
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		if got != s {
			t.Fatalf("round trip of %+v gave %+v", s, got)
		}
		for cut := range len(b) {
			if err := got.UnmarshalBinary(b[:cut]); !errors.Is(err, ErrCorruptSplit) {
				t.Fatalf("%+v cut to %d bytes: err = %v, want ErrCorruptSplit", s, cut, err)
			}
		}
		if err := got.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrCorruptSplit) {
			t.Fatalf("%+v with a trailing byte: err = %v, want ErrCorruptSplit", s, err)
		}
	}
}

func FuzzSplitUnmarshal(f *testing.F) {
	b, _ := Split{ID: "x", Offset: 5, Records: 2, Len: 9}.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Split
		if s.UnmarshalBinary(data) != nil {
			return
		}
		again, _ := s.MarshalBinary()
		var s2 Split
		if err := s2.UnmarshalBinary(again); err != nil || s2 != s {
			t.Fatalf("decoded %+v does not round trip: %+v, %v", s, s2, err)
		}
	})
}
