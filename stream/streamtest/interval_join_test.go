package streamtest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// The tests follow Flink's IntervalJoinOperatorTest: elements of one key
// "key" with the timestamps given, from "lhs" and "rhs"; the expected
// results are Flink's (left ts, right ts) pairs, timestamped with the
// larger of the two.

type ijElem struct {
	TS  int64
	Src string
}

type ijPair struct{ L, R ijElem }

const ms = time.Millisecond

type ijTest struct {
	t           *testing.T
	h           *Harness2[ijElem, ijElem, ijPair]
	left, right state.MapState[int64, []ijElem]
	backend     *state.Backend[string]
}

func ijKey(ijElem) string { return "key" }

// newIJ builds the join: bounds in milliseconds, exclusive as asked, and
// the late side outputs when the tags are given.
func newIJ(t *testing.T, lower int64, lowerIncl bool, upper int64, upperIncl bool, lateL, lateR *stream.OutputTag[ijElem]) *ijTest {
	t.Helper()
	x := &ijTest{t: t}
	h, err := New2(Options{}, func(a, b stream.DataStream[ijElem]) stream.DataStream[ijPair] {
		j := stream.IntervalJoin(stream.KeyBy(a, ijKey), stream.KeyBy(b, ijKey)).Between(time.Duration(lower)*ms, time.Duration(upper)*ms)
		if !lowerIncl {
			j = j.LowerBoundExclusive()
		}
		if !upperIncl {
			j = j.UpperBoundExclusive()
		}
		if lateL != nil {
			j = j.SideOutputLeftLateData(*lateL).SideOutputRightLateData(*lateR)
		}
		return stream.IntervalJoinProcess(j, func() stream.ProcessJoinFunction[string, ijElem, ijElem, ijPair] {
			return stream.ProcessJoinFunction[string, ijElem, ijElem, ijPair]{
				// the buffers are the operator's map states, read here as Flink's
				// test reads getLeftBuffer and getRightBuffer
				Open: func(rc *stream.KeyedRuntimeContext[string]) (err error) {
					x.backend = rc.Backend()
					if x.left, err = stream.GetMapState(rc, state.MapDescriptor[int64, []ijElem]{Name: "interval-join-left-buffer"}); err != nil {
						return err
					}
					x.right, err = stream.GetMapState(rc, state.MapDescriptor[int64, []ijElem]{Name: "interval-join-right-buffer"})
					return err
				},
				ProcessElement: func(l, r ijElem, ctx *stream.JoinContext[string], out stream.Collector[ijPair]) error {
					// testContextCorrectLeftTimestamp, ...RightTimestamp, testReturnsCorrectTimestamp
					if ctx.LeftTimestamp() != l.TS || ctx.RightTimestamp() != r.TS || ctx.Timestamp() != max(l.TS, r.TS) {
						return fmt.Errorf("context timestamps %d %d %d for %v %v", ctx.LeftTimestamp(), ctx.RightTimestamp(), ctx.Timestamp(), l, r)
					}
					out.Collect(ijPair{l, r})
					return nil
				},
			}
		})
	})
	must(t, err)
	x.h = h
	t.Cleanup(func() { h.Close() })
	return x
}

func (x *ijTest) el1(ts int64) *ijTest {
	must(x.t, x.h.ProcessElement1(ijElem{ts, "lhs"}, ts))
	return x
}
func (x *ijTest) el2(ts int64) *ijTest {
	must(x.t, x.h.ProcessElement2(ijElem{ts, "rhs"}, ts))
	return x
}
func (x *ijTest) wm(ts int64) *ijTest { must(x.t, x.h.ProcessWatermark(ts)); return x }

// elementsAndWatermarks is Flink's processElementsAndWatermarks(from, to),
// lhs first or rhs first. Flink's harness advances each input's watermark
// after its element; the operator's watermark is the smaller of the two,
// so it stays unset during the first side and follows the second.
func (x *ijTest) elementsAndWatermarks(from, to int64, lhsFirst bool) *ijTest {
	for pass := 0; pass < 2; pass++ {
		for i := from; i <= to; i++ {
			if (pass == 0) == lhsFirst {
				x.el1(i)
			} else {
				x.el2(i)
			}
			if pass == 1 {
				x.wm(i)
			}
		}
	}
	return x
}

func pairStr(l, r int64) string { return fmt.Sprintf("(%d,%d)@%d", l, r, max(l, r)) }

// expect checks the records (as a multiset) against Flink's pairs.
func (x *ijTest) expect(pairs ...[2]int64) *ijTest {
	x.t.Helper()
	var got, want []string
	for _, r := range x.h.Records() {
		if r.Value.L.Src != "lhs" || r.Value.R.Src != "rhs" {
			x.t.Fatalf("pair %v mixes the sides", r.Value)
		}
		got = append(got, fmt.Sprintf("(%d,%d)@%d", r.Value.L.TS, r.Value.R.TS, r.Timestamp))
	}
	for _, p := range pairs {
		want = append(want, pairStr(p[0], p[1]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		x.t.Fatalf("got %v, want %v", got, want)
	}
	return x
}

func bufferKeys(b *state.Backend[string], m state.MapState[int64, []ijElem]) []int64 {
	b.SetCurrentKey("key")
	ks := slices.Collect(m.Keys())
	slices.Sort(ks)
	return ks
}

// buffers checks the timestamps left in the two buffers.
func (x *ijTest) buffers(left, right []int64) *ijTest {
	x.t.Helper()
	if l := bufferKeys(x.backend, x.left); !slices.Equal(l, left) {
		x.t.Fatalf("left buffer %v, want %v", l, left)
	}
	if r := bufferKeys(x.backend, x.right); !slices.Equal(r, right) {
		x.t.Fatalf("right buffer %v, want %v", r, right)
	}
	return x
}

func p(l, r int64) [2]int64 { return [2]int64{l, r} }

// TestIntervalJoinBounds follows IntervalJoinOperatorTest's bound cases
// (testImplementationMirrorsCorrectly, testNegativeInclusiveAndNegative-
// Inclusive ... testPositiveExclusiveAndPositiveExlusive), with the left
// side first and the right side first as its parameter lhsFasterThanRhs.
func TestIntervalJoinBounds(t *testing.T) {
	cases := []struct {
		name      string
		lower     int64
		lowerIncl bool
		upper     int64
		upperIncl bool
		want      [][2]int64
	}{
		{"MirrorsCorrectly", 1, true, 3, false, [][2]int64{p(1, 2), p(1, 3), p(2, 3), p(2, 4), p(3, 4)}},
		{"MirrorsCorrectlyMirrored", -3, false, -1, true, [][2]int64{p(2, 1), p(3, 1), p(3, 2), p(4, 2), p(4, 3)}},
		{"NegativeInclusiveAndNegativeInclusive", -2, true, -1, true, [][2]int64{p(2, 1), p(3, 1), p(3, 2), p(4, 2), p(4, 3)}},
		{"NegativeInclusiveAndPositiveInclusive", -1, true, 1, true, [][2]int64{p(1, 1), p(1, 2), p(2, 1), p(2, 2), p(2, 3), p(3, 2), p(3, 3), p(3, 4), p(4, 3), p(4, 4)}},
		{"PositiveInclusiveAndPositiveInclusive", 1, true, 2, true, [][2]int64{p(1, 2), p(1, 3), p(2, 3), p(2, 4), p(3, 4)}},
		{"NegativeExclusiveAndNegativeExlusive", -3, false, -1, false, [][2]int64{p(3, 1), p(4, 2)}},
		{"NegativeExclusiveAndPositiveExlusive", -1, false, 1, false, [][2]int64{p(1, 1), p(2, 2), p(3, 3), p(4, 4)}},
		{"PositiveExclusiveAndPositiveExlusive", 1, false, 3, false, [][2]int64{p(1, 3), p(2, 4)}},
	}
	for _, c := range cases {
		for _, lhsFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/lhsFirst=%v", c.name, lhsFirst), func(t *testing.T) {
				newIJ(t, c.lower, c.lowerIncl, c.upper, c.upperIncl, nil, nil).elementsAndWatermarks(1, 4, lhsFirst).expect(c.want...)
			})
		}
	}
}

// TestIntervalJoinStateCleanup follows IntervalJoinOperatorTest's
// testStateCleanup* cases: the buffers after the watermarks 1, 4 and 6.
func TestIntervalJoinStateCleanup(t *testing.T) {
	all := []int64{1, 2, 3, 4, 5}
	cases := []struct {
		name           string
		lower          int64
		lowerIncl      bool
		upper          int64
		upperIncl      bool
		l1, r1, l4, r4 []int64
	}{
		{"NegativeInclusiveNegativeInclusive", -1, true, 0, true, []int64{2, 3, 4, 5}, all, []int64{5}, []int64{4, 5}},
		{"NegativePositiveNegativeExlusive", -2, false, 1, false, []int64{2, 3, 4, 5}, all, []int64{5}, []int64{4, 5}},
		{"PositiveInclusivePositiveInclusive", 0, true, 1, true, all, []int64{2, 3, 4, 5}, []int64{4, 5}, []int64{5}},
		{"PositiveExlusivePositiveExclusive", -1, false, 2, false, all, []int64{2, 3, 4, 5}, []int64{4, 5}, []int64{5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := newIJ(t, c.lower, c.lowerIncl, c.upper, c.upperIncl, nil, nil)
			for _, ts := range all {
				x.el1(ts)
			}
			for _, ts := range all {
				x.el2(ts)
			}
			x.wm(1).buffers(c.l1, c.r1).wm(4).buffers(c.l4, c.r4).wm(6).buffers(nil, nil)
		})
	}
}

// TestIntervalJoinRestore follows testRestoreFromSnapshot: the buffers and
// cleanup timers survive a snapshot into a new harness. Flink's watermark
// ts on the left input after the left element ts makes the operator's
// watermark ts - 1 (the right input's), then ts after the right one.
func TestIntervalJoinRestore(t *testing.T) {
	x := newIJ(t, -1, true, 1, true, nil, nil)
	for ts := int64(1); ts <= 3; ts++ {
		x.el1(ts).wm(ts - 1).el2(ts).wm(ts)
	}
	x.expect(p(1, 1), p(1, 2), p(2, 1), p(2, 2), p(2, 3), p(3, 2), p(3, 3))
	snap, err := x.h.Snapshot()
	must(t, err)
	y := newIJ(t, -1, true, 1, true, nil, nil)
	must(t, y.h.Restore(snap))
	y.el1(4).wm(3).el2(4).wm(4)
	y.expect(p(3, 4), p(4, 3), p(4, 4))
}

// TestIntervalJoinLateData follows testDiscardsLateData and testLateData:
// an element below the watermark joins nothing and goes to its side's
// late output when one is set.
func TestIntervalJoinLateData(t *testing.T) {
	newIJ(t, -1, true, 1, true, nil, nil).
		el1(1).el2(1).el1(2).el2(2).el1(3).el2(3).wm(3).
		el1(1).el1(4).el2(4).el1(5).el2(5).
		expect(p(1, 1), p(1, 2), p(2, 1), p(2, 2), p(2, 3), p(3, 2), p(3, 3), p(3, 4), p(4, 3), p(4, 4), p(4, 5), p(5, 4), p(5, 5))

	lateL, lateR := stream.NewOutputTag[ijElem]("left_late"), stream.NewOutputTag[ijElem]("right_late")
	x := newIJ(t, -1, true, 1, true, &lateL, &lateR).
		el1(3).el2(3).wm(3).el1(4).el2(4).el1(1).el2(2).el1(5).el2(5).
		expect(p(3, 3), p(3, 4), p(4, 3), p(4, 4), p(4, 5), p(5, 4), p(5, 5))
	if got := mustSide(t, x.h, lateL); !slices.Equal(got, []stream.Record[ijElem]{{Value: ijElem{1, "lhs"}, Timestamp: 1}}) {
		t.Fatalf("left late %v", got)
	}
	if got := mustSide(t, x.h, lateR); !slices.Equal(got, []stream.Record[ijElem]{{Value: ijElem{2, "rhs"}, Timestamp: 2}}) {
		t.Fatalf("right late %v", got)
	}
}

// TestIntervalJoinNoTimestamp follows testFailsWithNoTimestampsLeft and
// ...Right: an element without a timestamp fails the join.
func TestIntervalJoinNoTimestamp(t *testing.T) {
	if err := newIJ(t, 0, true, 0, true, nil, nil).h.ProcessElement1(ijElem{0, "lhs"}, watermark.Min); err == nil {
		t.Fatal("left element without a timestamp accepted")
	}
	if err := newIJ(t, 0, true, 0, true, nil, nil).h.ProcessElement2(ijElem{0, "rhs"}, watermark.Min); err == nil {
		t.Fatal("right element without a timestamp accepted")
	}
}
