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
