package source

import (
	"context"
	"strings"
	"testing"
)

// TestNoAllocationPerRecord reads in the steady state and counts
// allocations per Next: none for a generator, and for a text file only the
// read buffer, one per ReadSize bytes, far fewer than one per batch of lines.
func TestNoAllocationPerRecord(t *testing.T) {
	ctx := context.Background()
	gen := Generator(func(i int64) int64 { return i }, 0, 0, BatchSize(256))
	_, rs := newReaders(t, gen, 1, nil)
	rs[0].Next(ctx) // opens the split
	if a := testing.AllocsPerRun(100, func() { rs[0].Next(ctx) }); a != 0 {
		t.Errorf("generator: %v allocations per batch of 256, want 0", a)
	}

	path := writeFile(t, t.TempDir(), "big.txt", strings.Repeat("a line\n", 200_000))
	src, err := Files(Text(), path, BatchSize(256), ReadSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newReaders(t, src, 1, nil)
	ts[0].Next(ctx)
	// 256 lines of 7 bytes per batch: a 64 KiB buffer lasts about 36 batches.
	if a := testing.AllocsPerRun(200, func() { ts[0].Next(ctx) }); a > 0.1 {
		t.Errorf("text: %v allocations per batch of 256 lines, want under 0.1", a)
	}
}
