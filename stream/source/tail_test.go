package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTail(t *testing.T) {
	path := writeFile(t, t.TempDir(), "log.txt", "a\nb\n")
	src, err := Tail(path, PollInterval(2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if src.Boundedness() != Unbounded {
		t.Fatal("a tailed file is bounded")
	}
	_, rs := newReaders(t, src, 1, nil)
	r := rs[0]
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	expect := func(want ...string) {
		t.Helper()
		got, err := nextRecords(ctx, r, len(want))
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	}
	expect("a", "b")
	appendFile(t, path, "c\n")
	expect("c")

	// A line written in two parts is one line, handed out once its '\n' came;
	// until then it waits and the position stays before it.
	appendFile(t, path, "d-first-")
	short, cancelShort := context.WithTimeout(ctx, 30*time.Millisecond)
	got, err := nextRecords(short, r, 1)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) || len(got) != 0 {
		t.Fatalf("partial line: got %q, %v", got, err)
	}
	if pos := r.Positions(); len(pos) != 1 || pos[0] != (Split{ID: path, Offset: 6, Records: 3, Len: -1}) {
		t.Fatalf("positions %v, want %s at byte 6, 3 lines", pos, path)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		time.Sleep(10 * time.Millisecond)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		f.WriteString("second")
		time.Sleep(10 * time.Millisecond)
		f.WriteString("\ne\n")
	})
	expect("d-first-second", "e")
	wg.Wait()
	pos := r.Positions()

	// Resumed from the position, a new reader reads only what came after.
	appendFile(t, path, "f\n")
	_, rs2 := newReaders(t, src, 1, nil)
	rs2[0].AddSplits(roundTrip(t, pos))
	r = rs2[0]
	expect("f")
}

func TestTailShrunk(t *testing.T) {
	path := writeFile(t, t.TempDir(), "log.txt", "aaaa\nbbbb\n")
	src, err := Tail(path, PollInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	if _, err := nextRecords(t.Context(), rs[0], 2); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 3); err != nil {
		t.Fatal(err)
	}
	_, err = rs[0].Next(t.Context())
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("err = %v, want one saying %s shrank", err, path)
	}
}

func TestTailMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.log")
	if _, err := Tail(path); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want a not-exist error naming %s", err, path)
	}
}
