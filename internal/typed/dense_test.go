package typed

import (
	"math"
	"testing"
)

// TestDense checks the dense rule at its edges: 4 entries a group, the
// floor, spans that would overflow a count, and no groups.
func TestDense(t *testing.T) {
	for _, tc := range []struct {
		span  uint64
		n     int
		floor int
		want  bool
	}{
		{0, 1, 0, true},                           // one key
		{3, 1, 0, true},                           // 4 entries for 1 group
		{4, 1, 0, false},                          // 5 entries for 1 group
		{399, 100, 0, true},                       // 400 entries for 100 groups
		{400, 100, 0, false},                      // 401
		{4095, 1, 4096, true},                     // the floor alone
		{4096, 1, 4096, false},                    // one beyond it
		{4096, 0, 4096, false},                    // no groups: the floor decides
		{4095, 0, 4096, true},                     //
		{math.MaxUint64, 1 << 20, 1 << 20, false}, // the whole word range
	} {
		if got := Dense(tc.span, tc.n, tc.floor); got != tc.want {
			t.Errorf("Dense(%d, %d, %d) = %v, want %v", tc.span, tc.n, tc.floor, got, tc.want)
		}
	}
}

// TestDenseWithin checks the rule with other counts of entries a group:
// IndexEntries for a table of indexes.
func TestDenseWithin(t *testing.T) {
	for _, tc := range []struct {
		span   uint64
		n, per int
		floor  int
		want   bool
	}{
		{11, 1, IndexEntries, 0, true},
		{12, 1, IndexEntries, 0, false},
		{7999, 1000, IndexEntries, 0, true}, // one key in 8
		{7999, 1000, DenseEntries, 0, false},
		{11999, 1000, IndexEntries, 0, true},
		{12000, 1000, IndexEntries, 0, false},
		{4095, 1, IndexEntries, 4096, true}, // the floor alone
	} {
		if got := DenseWithin(tc.span, tc.n, tc.per, tc.floor); got != tc.want {
			t.Errorf("DenseWithin(%d, %d, %d, %d) = %v, want %v", tc.span, tc.n, tc.per, tc.floor, got, tc.want)
		}
	}
}

// TestDenseFloor checks the floor: an eighth of the share in entries,
// between 4096 and 1M, and 32 MiB's worth without a share.
func TestDenseFloor(t *testing.T) {
	for _, tc := range []struct {
		share, entry int64
		want         int
	}{
		{0, 4, 1 << 20},         // 32 MiB / 4 = 8M entries, capped at 1M
		{0, 64, 512 << 10},      // 32 MiB / 64
		{8 << 20, 4, 256 << 10}, // 1 MiB / 4
		{64 << 10, 4, 4096},     // 8 KiB / 4 = 2048, raised to 4096
		{-1, 64, 512 << 10},     // a negative share: none
		{1 << 40, 1, 1 << 20},
	} {
		if got := DenseFloor(tc.share, tc.entry); got != tc.want {
			t.Errorf("DenseFloor(%d, %d) = %d, want %d", tc.share, tc.entry, got, tc.want)
		}
	}
}
