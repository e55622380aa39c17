package formats

import (
	"math"
	"testing"
)

func TestSplitTarget(t *testing.T) {
	const M = MinSplitSize
	cases := []struct {
		total, maxSize int64
		n              int
		want           int64
	}{
		{0, 100, 2, 100},                  // nothing to cut
		{1000, 100, 1, 100},               // 10 ranges within the most
		{1000, 300, 1, 250},               // 4 equal ranges, not 3 of 300 and one of 100
		{1000, 300, 3, 250},               // 6 would be short: the least within the most, 4
		{10 * M, 32 * M, 2, 5 * M},        // one range raised to two for two readers
		{10 * M, 32 * M, 4, 5 * M / 2},    // and to four
		{10 * M, 32 * M, 16, M},           // sixteen would be short: ten of MinSplitSize
		{40 * M, 32 * M, 16, 40 * M / 16}, // 2 raised to 16
		{40 * M, 2 * M, 16, 40 * M / 32},  // 20 raised to 32
		{20 * M, 6 * M / 5, 16, M},        // 17 raised to 32 would be short: 20 fit
		{3 * M, 32 * M, 2, 3 * M / 2},     // two of 1.5 M
		{M, 32 * M, 2, M},                 // one range: two would be shorter than MinSplitSize
		{100 * M, 32 * M, 2, 25 * M},      // 4 ranges: 3.2 raised to 4
		{100 * M, 32 * M, 3, 100*M/6 + 1}, // 4 raised to 6, rounded up
		{500, 100, 0, 100},                // n < 1 counts as 1
		{500, math.MaxInt64, 1, 500},      // one split per file: no overflow
		{500, math.MaxInt64, 2, 500},      // two would be shorter than MinSplitSize
		{4 * M, math.MaxInt64, 2, 2 * M},  // two for two readers
	}
	for _, c := range cases {
		if got := SplitTarget(c.total, c.maxSize, c.n); got != c.want {
			t.Errorf("SplitTarget(%d, %d, %d) = %d, want %d", c.total, c.maxSize, c.n, got, c.want)
		}
	}
}

// TestByteRanges: the ranges cover [0, size) in order, none longer than the
// target, and their lengths differ by at most one byte.
func TestByteRanges(t *testing.T) {
	for size := int64(0); size < 300; size++ {
		for target := int64(1); target < 40; target++ {
			next, lo, hi, n := int64(0), size, int64(0), 0
			ByteRanges(size, target, func(start, end int64) {
				if start != next || end <= start || end-start > target {
					t.Fatalf("size %d target %d: range %d-%d after %d", size, target, start, end, next)
				}
				lo, hi, next = min(lo, end-start), max(hi, end-start), end
				n++
			})
			if next != size || (n > 0 && hi-lo > 1) || int64(n) != (size+target-1)/target {
				t.Fatalf("size %d target %d: %d ranges to %d, lengths %d-%d", size, target, n, next, lo, hi)
			}
		}
	}
}
