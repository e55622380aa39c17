package flow

import (
	"bytes"
	"slices"
	"testing"
)

// TestSampleRoundTrip: a sample decodes to the keys and count encoded,
// empty keys and an empty sample included.
func TestSampleRoundTrip(t *testing.T) {
	for _, keys := range [][][]byte{nil, {{}}, {[]byte("a"), {}, bytes.Repeat([]byte{0xff}, 300)}} {
		b := encodeSample(nil, keys, 12345)
		got, seen, err := decodeSample(b)
		if err != nil || seen != 12345 || !slices.EqualFunc(got, keys, bytes.Equal) {
			t.Fatalf("decode(encode(%q)) = %q, %d, %v", keys, got, seen, err)
		}
	}
}

// TestBoundsDeterministic: bounds computed from the same samples, whose
// keys tie across producers of different weights, are the same every
// time: the processes of a spread job route alike.
func TestBoundsDeterministic(t *testing.T) {
	samples := [][][]byte{{[]byte("b"), []byte("a"), []byte("b")}, {[]byte("b"), []byte("c")}, {[]byte("b")}}
	seen := []int64{30, 2000, 7}
	want := boundsFromSamples(samples, seen, 4)
	for range 100 {
		if got := boundsFromSamples(samples, seen, 4); !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("bounds %q, then %q", want, got)
		}
	}
}

// FuzzDecodeSample: any input decodes without panicking, and what decodes
// encodes back to the same bytes.
func FuzzDecodeSample(f *testing.F) {
	f.Add(encodeSample(nil, [][]byte{[]byte("key"), {}}, 7))
	f.Add([]byte{})
	f.Add([]byte{0x80})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, seen, err := decodeSample(b)
		if err != nil {
			return
		}
		if again := encodeSample(nil, keys, seen); !bytes.Equal(again, b) && seen >= 0 {
			// a non-minimal varint decodes but encodes shorter
			k2, s2, err := decodeSample(again)
			if err != nil || s2 != seen || !slices.EqualFunc(k2, keys, bytes.Equal) {
				t.Fatalf("re-encoding %x gave %x, which decodes to %q, %d, %v", b, again, k2, s2, err)
			}
		}
	})
}
