package window

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"
	"time"
)

// bigWindows is the oracle of the time assigners at the int64 edges: the
// windows holding ts computed with big integers (tumbling and sliding: the
// starts s = offset + k*slide with s <= ts < s + size; sessions [ts, ts+gap)),
// latest start first, and whether they all fit in int64.
func bigWindows(ts, offset, size, slide int64) ([]TimeWindow, bool) {
	t, o, sz, sl := big.NewInt(ts), big.NewInt(offset), big.NewInt(size), big.NewInt(slide)
	lo, hi := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	// the last start: offset + floor((ts - offset) / slide) * slide
	k := new(big.Int).Sub(t, o)
	k.Div(k, sl) // Euclidean: floor for a positive divisor
	start := new(big.Int).Add(o, k.Mul(k, sl))
	var out []TimeWindow
	fits := true
	for {
		end := new(big.Int).Add(start, sz)
		if end.Cmp(t) <= 0 {
			return out, fits
		}
		if start.Cmp(lo) < 0 || end.Cmp(hi) > 0 {
			fits = false
		} else {
			out = append(out, TimeWindow{start.Int64(), end.Int64()})
		}
		start = new(big.Int).Sub(start, sl)
	}
}

// TestAssignersAtInt64Edges assigns timestamps near math.MinInt64 and
// math.MaxInt64: the windows are the oracle's when they all fit, and else
// the assigner returns ErrOutOfRange and no window; no window ever ends at
// or before its start.
func TestAssignersAtInt64Edges(t *testing.T) {
	var stamps []int64
	for _, d := range []int64{0, 1, 2, 3, 99, 100, 101, 4999, 5000, 5001, 5807, 5808, 9999, 10000, 10001} {
		stamps = append(stamps, math.MaxInt64-d, math.MinInt64+1+d)
	}
	stamps = append(stamps, 0, -1, 1)
	ms := time.Millisecond
	for _, c := range []struct {
		name                string
		size, slide, offset int64
		tumbling            bool
	}{
		{"tumbling 5s", 5000, 5000, 0, true},
		{"tumbling 5s offset 100", 5000, 5000, 100, true},
		{"tumbling 5s offset -100", 5000, 5000, -100, true},
		{"tumbling 1ms", 1, 1, 0, true},
		{"sliding 5s/1s", 5000, 1000, 0, false},
		{"sliding 5s/1s offset 300", 5000, 1000, 300, false},
		{"sliding 10s/3s offset -2s", 10000, 3000, -2000, false},
		{"sliding 1s/5s (gaps)", 1000, 5000, 0, false},
	} {
		var a Assigner[TimeWindow]
		var each EachAssigner[TimeWindow]
		if c.tumbling {
			tw := TumblingEventTimeWindows(time.Duration(c.size)*ms, time.Duration(c.offset)*ms)
			a, each = tw, tw
		} else {
			a = SlidingEventTimeWindows(time.Duration(c.size)*ms, time.Duration(c.slide)*ms, time.Duration(c.offset)*ms)
		}
		for _, ts := range stamps {
			want, fits := bigWindows(ts, c.offset, c.size, c.slide)
			got, err := a.AssignWindows(nil, ts, nil, nil)
			switch {
			case !fits && !errors.Is(err, ErrOutOfRange):
				t.Errorf("%s, %d: %v, %v; want ErrOutOfRange", c.name, ts, got, err)
			case !fits && len(got) != 0:
				t.Errorf("%s, %d: windows %v with the error", c.name, ts, got)
			case fits && (err != nil || !slices.Equal(got, want)):
				t.Errorf("%s, %d: %v, %v; want %v", c.name, ts, got, err, want)
			}
			for _, w := range got {
				if w.End <= w.Start || ts < w.Start || ts >= w.End {
					t.Errorf("%s, %d: window %v", c.name, ts, w)
				}
			}
			if each != nil {
				dst := make([]TimeWindow, 1)
				err := each.AssignEach([]int64{ts}, nil, dst)
				if fits != (err == nil) || (fits && dst[0] != want[0]) || (!fits && !errors.Is(err, ErrOutOfRange)) {
					t.Errorf("%s, %d: AssignEach %v, %v; want %v (fits %v)", c.name, ts, dst, err, want, fits)
				}
			}
		}
	}
	s := EventTimeSessionWindows(5 * time.Second)
	for _, ts := range stamps {
		got, err := s.AssignWindows(nil, ts, nil, nil)
		fits := ts <= math.MaxInt64-5000
		if fits != (err == nil) || (fits && !slices.Equal(got, []TimeWindow{{ts, ts + 5000}})) || (!fits && (len(got) != 0 || !errors.Is(err, ErrOutOfRange))) {
			t.Errorf("session, %d: %v, %v", ts, got, err)
		}
	}
	if _, err := s.AssignWindows(nil, math.MinInt64, nil, nil); err == nil || errors.Is(err, ErrOutOfRange) {
		t.Errorf("session, MinInt64: %v; want the no-timestamp error", err)
	}
}
