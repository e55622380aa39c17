package source

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestGeneratorCount(t *testing.T) {
	fn := func(i int64) int64 { return i * 10 }
	for _, p := range []int{1, 3, 8} {
		src := Generator(fn, 1000, 0, BatchSize(64))
		if src.Boundedness() != Bounded {
			t.Fatal("a generator with a count is not bounded")
		}
		res := readWhole(t, src, p)
		got := splitsInOrder(res, "generator")
		if len(got) != 1000 {
			t.Fatalf("p=%d: %d records, want 1000", p, len(got))
		}
		for i, v := range got {
			if v != int64(i)*10 {
				t.Fatalf("p=%d: record %d = %d, want %d", p, i, v, i*10)
			}
		}
	}
	checkResumeEvery(t, Generator(fn, 9, 0, BatchSize(1)), []int64{0, 10, 20, 30, 40, 50, 60, 70, 80})
}

// TestGeneratorPacing reads a paced generator under a fake clock: record k
// of a reader is released k/rate after the reader opened (the first at
// once), where rate is the source's rate divided by the parallelism, as
// Flink's RateLimiterStrategy.perSecond.
func TestGeneratorPacing(t *testing.T) {
	for _, tc := range []struct {
		perSecond float64
		p         int
		count     int64
		every     time.Duration
	}{
		{5, 1, 10, 200 * time.Millisecond},
		{10, 2, 12, 200 * time.Millisecond},
		{1000, 1, 50, time.Millisecond},
	} {
		clk := newFakeClock()
		src := Generator(func(i int64) int64 { return i }, tc.count, tc.perSecond, WithClock(clk), Assign(Static))
		_, rs := newReaders(t, src, tc.p, nil)
		start := clk.Now()
		for ri, r := range rs {
			// Readers are opened one after the other; each is paced from its own start.
			opened := clk.Now()
			k := 0
			for {
				b, err := r.Next(context.Background())
				if err != nil {
					break
				}
				for range b.Records {
					if at, want := clk.Now().Sub(opened), time.Duration(k)*tc.every; at != want {
						t.Fatalf("%+v reader %d: record %d released at %v, want %v", tc, ri, k, at, want)
					}
					k++
				}
			}
			if want := int(tc.count) / tc.p; k != want {
				t.Fatalf("%+v reader %d: %d records, want %d", tc, ri, k, want)
			}
		}
		perReader := tc.count / int64(tc.p)
		if got, want := clk.Now().Sub(start), time.Duration(tc.p)*time.Duration(perReader-1)*tc.every; got != want {
			t.Fatalf("%+v: took %v of fake time, want %v", tc, got, want)
		}
	}
}

func TestGeneratorUnbounded(t *testing.T) {
	src := Generator(func(i int64) int64 { return -i }, 0, 0, BatchSize(7), Assign(Static))
	if src.Boundedness() != Unbounded {
		t.Fatal("a generator without a count is bounded")
	}
	_, rs := newReaders(t, src, 2, nil)
	got, err := nextRecords(t.Context(), rs[1], 100)
	if err != nil {
		t.Fatal(err)
	}
	pos := rs[1].Positions()
	if len(pos) != 1 || pos[0].Records != int64(len(got)) || pos[0].Offset != pos[0].Records+(1<<62) {
		t.Fatalf("positions %v after %d records", pos, len(got))
	}
	if !slices.Equal(got[:3], []int64{-(1 << 62), -(1<<62 + 1), -(1<<62 + 2)}) {
		t.Fatalf("reader 1 starts with %v", got[:3])
	}
}

// TestNextAfterDeadline calls Next with short deadlines on a paced generator:
// a Next ended by its deadline loses nothing, and the records come in order
// across the calls (TestTail does the same with a partial line).
func TestNextAfterDeadline(t *testing.T) {
	src := Generator(func(i int64) int64 { return i }, 20, 1000)
	_, rs := newReaders(t, src, 1, nil)
	var got []int64
	deadlines := 0
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Microsecond)
		b, err := rs[0].Next(ctx)
		cancel()
		if err == context.DeadlineExceeded {
			deadlines++
			continue
		}
		if err != nil {
			break
		}
		got = append(got, b.Records...)
	}
	want := make([]int64, 20)
	for i := range want {
		want[i] = int64(i)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v after %d deadlines", got, deadlines)
	}
	if deadlines == 0 {
		t.Fatal("no Next ended by its deadline")
	}
}
