package watermark

import (
	"math/rand/v2"
	"testing"
	"time"
)

func mustBounded(t *testing.T, d time.Duration) *BoundedOutOfOrderness[any] {
	t.Helper()
	g, err := NewBoundedOutOfOrderness[any](d)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func wantLast(t *testing.T, out *testingOutput, want int64) {
	t.Helper()
	if got, ok := out.lastWatermark(); !ok || got != want {
		t.Fatalf("last watermark %d (emitted %v), want %d", got, ok, want)
	}
}

// TestBoundedOutOfOrderness follows Flink's BoundedOutOfOrdernessWatermarksTest.
func TestBoundedOutOfOrderness(t *testing.T) {
	t.Run("testWatermarkBeforeRecords", func(t *testing.T) {
		out := &testingOutput{}
		mustBounded(t, 10*time.Millisecond).OnPeriodicEmit(out)
		wantLast(t, out, Min)
	})
	t.Run("testWatermarkAfterEvent", func(t *testing.T) {
		out := &testingOutput{}
		g := mustBounded(t, 10*time.Millisecond)
		g.OnEvent(nil, 1337, out)
		g.OnPeriodicEmit(out)
		wantLast(t, out, 1326)
	})
	t.Run("testWatermarkAfterNonMonotonousEvents", func(t *testing.T) {
		out := &testingOutput{}
		g := mustBounded(t, 10*time.Millisecond)
		for _, ts := range []int64{12345, 12300, 12340, 12280} {
			g.OnEvent(nil, ts, out)
		}
		g.OnPeriodicEmit(out)
		wantLast(t, out, 12334)
	})
	t.Run("testRepeatedProbe", func(t *testing.T) {
		out := &testingOutput{}
		g := mustBounded(t, 10*time.Millisecond)
		g.OnEvent(nil, 723456, &testingOutput{})
		g.OnPeriodicEmit(&testingOutput{})
		g.OnPeriodicEmit(out)
		wantLast(t, out, 723445)
	})
	t.Run("onEventEmitsNothing", func(t *testing.T) {
		out := &testingOutput{}
		g := mustBounded(t, 0)
		g.OnEvent(nil, 5, out)
		if len(out.calls) != 0 {
			t.Fatalf("OnEvent reported %v", out.calls)
		}
	})
	t.Run("negativeBound", func(t *testing.T) {
		if _, err := NewBoundedOutOfOrderness[any](-time.Millisecond); err == nil {
			t.Fatal("a negative bound was accepted")
		}
	})
	t.Run("truncatedToMilliseconds", func(t *testing.T) {
		out := &testingOutput{}
		g := mustBounded(t, 1999*time.Microsecond) // 1 ms, as Duration.toMillis
		g.OnEvent(nil, 100, out)
		g.OnPeriodicEmit(out)
		wantLast(t, out, 98)
	})
}

// TestAscendingTimestamps follows Flink's AscendingTimestampsWatermarksTest.
func TestAscendingTimestamps(t *testing.T) {
	t.Run("testWatermarkBeforeRecords", func(t *testing.T) {
		out := &testingOutput{}
		NewAscendingTimestamps[any]().OnPeriodicEmit(out)
		wantLast(t, out, Min)
	})
	t.Run("testWatermarkAfterEvent", func(t *testing.T) {
		out := &testingOutput{}
		g := NewAscendingTimestamps[any]()
		g.OnEvent(nil, 1337, out)
		g.OnPeriodicEmit(out)
		wantLast(t, out, 1336)
	})
	t.Run("testWatermarkAfterEventWithLowerTimestamp", func(t *testing.T) {
		out := &testingOutput{}
		g := NewAscendingTimestamps[any]()
		g.OnEvent(nil, 12345, out)
		g.OnEvent(nil, 12340, out)
		g.OnPeriodicEmit(out)
		wantLast(t, out, 12344)
	})
}

// TestBoundedRandom checks random event sequences against the definition:
// after events, a periodic emission emits max(timestamps) - bound - 1; before
// any, Min.
func TestBoundedRandom(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		bound := int64(rng.IntN(1000))
		g := mustBounded(t, time.Duration(bound)*time.Millisecond)
		out := &testingOutput{}
		seen := false
		var largest int64
		for range 100 {
			if rng.IntN(4) == 0 {
				g.OnPeriodicEmit(out)
				want := Min
				if seen {
					want = largest - bound - 1
				}
				if got, _ := out.lastWatermark(); got != want {
					t.Fatalf("seed %d: watermark %d, want %d", seed, got, want)
				}
				continue
			}
			ts := rng.Int64N(1_000_000) - 500_000
			if !seen || ts > largest {
				largest = ts
			}
			seen = true
			g.OnEvent(nil, ts, out)
		}
	}
}
