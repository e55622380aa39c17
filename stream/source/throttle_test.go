package source

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
)

// TestReaderRate reads 50 records of a slice throttled to 100 per second on
// a fake clock: the reader waits 10 ms of the clock per record (the first
// at once), so the 50th comes at 490 ms and the end of the split, found
// when a 51st would be due, at 500 ms; no batch holds more than the
// allowance of one wait.
func TestReaderRate(t *testing.T) {
	items := make([]int, 50)
	for i := range items {
		items[i] = i
	}
	clk := &stepClock{now: time.Unix(1000, 0)}
	src := FromSlice(items, BatchSize(1024))
	enum, err := src.Enumerator(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Reader(ReaderContext{Subtask: 0, Parallelism: 1, Splits: enum, Rate: 100, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := clk.now
	var got []int
	for {
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) > 1 {
			t.Fatalf("a batch of %d records at 100/s, want 1 per 10ms step", len(b.Records))
		}
		got = append(got, b.Records...)
	}
	if len(got) != 50 || got[49] != 49 {
		t.Fatalf("read %v, want 0..49", got)
	}
	if el := clk.now.Sub(start); el != 500*time.Millisecond {
		t.Fatalf("the clock advanced %v, want 500ms", el)
	}
}

// stepClock is a fake clock whose timers advance it to their time.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

func (c *stepClock) Timer(at time.Time) clock.Timer {
	if at.After(c.now) {
		c.now = at
	}
	return firedAt(c.now)
}

// TestThrottle: at 1,000 records per second record k is due at k ms; an
// allowance is at most 10 records (a hundredth of a second's), and a
// reader more than a second behind starts anew with one record.
func TestThrottle(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := clock.NewManual(start)
	th := NewThrottle(1000, clk)
	if n, w := th.Allowance(); n != 1 || w != 0 {
		t.Fatalf("first allowance %d, %v; want 1, 0", n, w)
	}
	th.Took(1)
	if n, w := th.Allowance(); n != 0 || w != time.Millisecond {
		t.Fatalf("allowance %d, %v right after; want 0, 1ms", n, w)
	}
	clk.Advance(5 * time.Millisecond) // records 1 to 5 are due
	if n, _ := th.Allowance(); n != 5 {
		t.Fatalf("allowance %d at 5 ms, want 5", n)
	}
	th.Took(5)
	clk.Advance(100 * time.Millisecond)
	if n, _ := th.Allowance(); n != 10 {
		t.Fatalf("allowance %d at 105 ms, want the burst of 10", n)
	}
	th.Took(10)
	clk.Advance(2 * time.Second)
	if n, w := th.Allowance(); n != 1 || w != 0 {
		t.Fatalf("allowance %d, %v 2 s behind; want 1, 0 (a new start)", n, w)
	}
	th.Took(1)
	if n, w := th.Allowance(); n != 0 || w != time.Millisecond {
		t.Fatalf("allowance %d, %v after the new start; want 0, 1ms", n, w)
	}
}
