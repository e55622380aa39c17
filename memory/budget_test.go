package memory

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		want int64
	}{
		{"4294967296\n", 4 << 30},
		{"max\n", 0},                 // cgroup v2 without a limit
		{"9223372036854771712\n", 0}, // cgroup v1 without a limit
		{"", 0}, {"-1\n", 0}, {"12x\n", 0},
	} {
		f := filepath.Join(dir, "limit")
		if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readLimit(f); got != tc.want {
			t.Errorf("readLimit(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if got := readLimit(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("readLimit of a missing file = %d, want 0", got)
	}
}

// TestLimitRuntime checks the runtime limit against the sum of the running
// jobs' budgets, its restoration by the last job, and that a limit the
// process set itself is kept.
func TestLimitRuntime(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)

	endA := LimitRuntime(100 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(100<<20+RuntimeOverhead); got != want {
		t.Fatalf("limit with one job = %d, want %d", got, want)
	}
	endB := LimitRuntime(50 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(150<<20+RuntimeOverhead); got != want {
		t.Fatalf("limit with two jobs = %d, want %d", got, want)
	}
	endA()
	endA() // a second call does nothing
	if got, want := debug.SetMemoryLimit(-1), int64(50<<20+RuntimeOverhead); got != want {
		t.Fatalf("limit after the first job = %d, want %d", got, want)
	}
	endB()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("limit after both jobs = %d, want none", got)
	}

	LimitRuntime(Unlimited)() // no budget: nothing changes
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("limit after an unlimited job = %d, want none", got)
	}

	debug.SetMemoryLimit(1 << 30) // the user's own
	end := LimitRuntime(10 << 20)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Fatalf("limit with the user's set = %d, want %d", got, 1<<30)
	}
	end()
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Fatalf("limit after a job under the user's = %d, want %d", got, 1<<30)
	}
}

// TestOffHeap checks that memory held outside the Go heap lowers the
// runtime limit while held, not below RuntimeOverhead, and not a limit the
// process set itself.
func TestOffHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)

	end := LimitRuntime(100 << 20)
	off := OffHeap(16 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(84<<20+RuntimeOverhead); got != want {
		t.Fatalf("limit with 16 MiB off the heap = %d, want %d", got, want)
	}
	big := OffHeap(200 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(RuntimeOverhead); got != want {
		t.Fatalf("limit with more off the heap than the budget = %d, want %d", got, want)
	}
	big()
	off()
	off() // a second call does nothing
	if got, want := debug.SetMemoryLimit(-1), int64(100<<20+RuntimeOverhead); got != want {
		t.Fatalf("limit after the off-heap memory went = %d, want %d", got, want)
	}
	end()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("limit after the job = %d, want none", got)
	}

	debug.SetMemoryLimit(1 << 30) // the user's own
	end = LimitRuntime(10 << 20)
	OffHeap(8 << 20)()
	off = OffHeap(4 << 20)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Fatalf("limit under the user's = %d, want %d", got, 1<<30)
	}
	off()
	end()
}

// TestDefaultBudget checks the bounds of DefaultBudget.
func TestDefaultBudget(t *testing.T) {
	got := DefaultBudget()
	if got < MinDefaultBudget || got%(1<<20) != 0 {
		t.Fatalf("DefaultBudget() = %d: want whole MiB, at least %d", got, MinDefaultBudget)
	}
	if total := totalMemory(); total/4 >= MinDefaultBudget && got > total/4 {
		t.Errorf("DefaultBudget() = %d, more than a quarter of the machine's %d", got, total)
	}
	if c := CgroupLimit(); c/4 >= MinDefaultBudget && got > c/4 {
		t.Errorf("DefaultBudget() = %d, more than a quarter of the cgroup's %d", got, c)
	}
}

func TestManaged(t *testing.T) {
	for _, c := range []struct{ process, want int64 }{
		{0, 0},
		{-1, -1},
		{1 << 20, 512 << 10},     // half of a small budget
		{64 << 20, 32 << 20},     // half and RuntimeOverhead agree
		{65 << 20, 33 << 20},     // RuntimeOverhead from here on
		{256 << 20, 224 << 20},   //
		{6026 << 20, 5994 << 20}, //
		{Unlimited, Unlimited},   // no budget stays none
		{Unlimited - 1, Unlimited - 1 - RuntimeOverhead}, // just under
	} {
		if got := Managed(c.process); got != c.want {
			t.Errorf("Managed(%d) = %d, want %d", c.process, got, c.want)
		}
	}
}
