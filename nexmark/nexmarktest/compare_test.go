package nexmarktest

import "testing"

// TestCompareRule checks the rule itself on small cases.
func TestCompareRule(t *testing.T) {
	want := [][]string{{"870.772", "a"}, {"5", "b"}, {"5", "b"}, {"0.1234567", "c"}}
	for _, c := range []struct {
		got         [][]string
		lost, extra int
	}{
		{[][]string{{"8.70772e2", "a"}, {"5.0", "b"}, {"5", "b"}, {"0.1234568", "c"}}, 0, 0},
		{[][]string{{"870.772", "a"}, {"5", "b"}, {"0.123457", "c"}}, 1, 0},
		{[][]string{{"870.772", "a"}, {"5", "b"}, {"5", "b"}, {"5", "b"}, {"0.1234567", "c"}}, 0, 1},
		{[][]string{{"870.773", "a"}, {"5", "B"}, {"5", "b"}, {"0.1234567", "c"}}, 2, 2},
	} {
		lost, extra := Compare(want, c.got)
		if len(lost) != c.lost || len(extra) != c.extra {
			t.Errorf("%q: lost %d extra %d, want %d and %d", c.got, len(lost), len(extra), c.lost, c.extra)
		}
	}
}
