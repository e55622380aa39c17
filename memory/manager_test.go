package memory

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

func closeManager(t *testing.T, m *Manager) {
	t.Helper()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestManagerOptions(t *testing.T) {
	if o := (Options{}).EnsureDefaults(); o.SegmentSize != DefaultSegmentSize || o.Budget != Unlimited {
		t.Errorf("EnsureDefaults = %+v", o)
	}
	if o := (Options{SegmentSize: 8192, Budget: -5}).EnsureDefaults(); o.SegmentSize != 8192 || o.Budget != Unlimited {
		t.Errorf("EnsureDefaults kept a negative budget: %+v", o)
	}
	for _, size := range []int{-1, 1, 2048, 4095, 4097, 6000, 3 << 12} {
		if _, err := NewManager(Options{SegmentSize: size}); err == nil || !strings.HasPrefix(err.Error(), "memory: ") {
			t.Errorf("segment size %d: err = %v", size, err)
		}
	}
	m, err := NewManager(Options{SegmentSize: 4096, Budget: 100})
	if err != nil || m.SegmentSize() != 4096 || m.Budget() != 100 || m.Available() != 100 {
		t.Fatalf("NewManager: %v %v", m, err)
	}
	closeManager(t, m)
}

func TestManagerBudgetEnforced(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096, Budget: 4 * 4096})
	r := m.NewReservation("op")
	var segs [][]byte
	for i := 0; i < 4; i++ {
		s, err := r.Segment()
		if err != nil || len(s) != 4096 {
			t.Fatalf("segment %d: len %d, err %v", i, len(s), err)
		}
		segs = append(segs, s)
	}
	if _, err := r.Segment(); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("fifth segment: err = %v", err)
	}
	if err := r.Grow(1); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("Grow past budget: err = %v", err)
	}
	if m.Used() != 4*4096 || m.Available() != 0 || r.Bytes() != 4*4096 || r.Segments() != 4 {
		t.Fatalf("Used %d Available %d Bytes %d Segments %d", m.Used(), m.Available(), r.Bytes(), r.Segments())
	}
	r.FreeSegment(segs[3])
	if err := r.Grow(4000); err != nil {
		t.Fatal(err)
	}
	if err := r.Grow(97); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("Grow of 97 with 96 left: err = %v", err)
	}
	if err := r.Grow(96); err != nil || m.Available() != 0 {
		t.Fatalf("Grow of exactly what is left: %v, available %d", err, m.Available())
	}
	if err := r.Grow(0); err != nil {
		t.Fatal(err)
	}
	r.Shrink(4096)
	if m.Used() != 3*4096 || r.Bytes() != 3*4096 {
		t.Fatalf("after Shrink: Used %d Bytes %d", m.Used(), r.Bytes())
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if m.Used() != 0 {
		t.Fatalf("Used after Release = %d", m.Used())
	}
	closeManager(t, m)
}

func TestManagerShrinkPanicsOnSegments(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096})
	r := m.NewReservation("shrinker")
	defer func() {
		if recover() == nil {
			t.Error("Shrink of segment bytes did not panic")
		}
		_ = r.Release()
		closeManager(t, m)
	}()
	if _, err := r.Segment(); err != nil {
		t.Fatal(err)
	}
	_ = r.Grow(10)
	r.Shrink(11) // holds 10 plain bytes and one segment
}

func TestManagerForceAndPeak(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096, Budget: 2 * 4096})
	r := m.NewReservation("merge")
	r.Force(3 * 4096)
	s := r.ForceSegment()
	if len(s) != 4096 || m.Used() != 4*4096 || r.Bytes() != 4*4096 || m.Available() != 0 {
		t.Fatalf("Force past budget: len %d Used %d Bytes %d Available %d", len(s), m.Used(), r.Bytes(), m.Available())
	}
	if err := r.Grow(1); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("Grow while over budget: %v", err)
	}
	if _, err := r.Segment(); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("Segment while over budget: %v", err)
	}
	r.Force(0)
	r.Force(-1)
	r.FreeSegment(s)
	r.Shrink(3 * 4096)
	if m.Used() != 0 || m.Peak() != 4*4096 {
		t.Fatalf("Used %d Peak %d", m.Used(), m.Peak())
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	r.Force(100) // ignored after Release
	if m.Used() != 0 || m.Peak() != 4*4096 {
		t.Fatalf("after Release: Used %d Peak %d", m.Used(), m.Peak())
	}
	closeManager(t, m)
}

func TestManagerPoolReuse(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096, Budget: 2 * 4096})
	r := m.NewReservation("pool")
	a, _ := r.Segment()
	b, _ := r.Segment()
	pa, pb := unsafe.SliceData(a), unsafe.SliceData(b)
	r.FreeSegment(a)
	r.FreeSegment(b)
	r2 := m.NewReservation("pool2")
	c, err := r2.Segment()
	if err != nil {
		t.Fatal(err)
	}
	d, err := r2.Segment()
	if err != nil {
		t.Fatal(err)
	}
	if got := []*byte{unsafe.SliceData(c), unsafe.SliceData(d)}; !(got[0] == pb && got[1] == pa) {
		t.Errorf("segments were not reused from the pool (LIFO)")
	}
	if a := testing.AllocsPerRun(100, func() {
		s, err := r2.Segment()
		if err == nil {
			t.Fatal("third segment within a two-segment budget")
		}
		r2.FreeSegment(c)
		s, err = r2.Segment()
		if err != nil {
			t.Fatal(err)
		}
		c = s
	}); a != 0 {
		t.Errorf("steady-state Segment/FreeSegment: %v allocs, want 0", a)
	}
	_ = r.Release()
	_ = r2.Release()
	closeManager(t, m)
}

func TestManagerCloseReportsLeaks(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096})
	ok := m.NewReservation("released")
	leak1 := m.NewReservation("sorter#1")
	leak2 := m.NewReservation("join-build")
	_ = leak1.Grow(10)
	if _, err := leak2.Segment(); err != nil {
		t.Fatal(err)
	}
	if err := ok.Release(); err != nil {
		t.Fatal(err)
	}
	err := m.Close()
	want := "memory: 2 reservation(s) not released: join-build (4096 bytes), sorter#1 (10 bytes)"
	if err == nil || err.Error() != want {
		t.Fatalf("Close = %v\nwant    %s", err, want)
	}
	_ = leak1.Release()
	_ = leak2.Release()
	if err := m.Close(); err != nil {
		t.Fatalf("Close after releasing the leaks: %v", err)
	}
}

func TestReservationAfterRelease(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096})
	r := m.NewReservation("twice")
	if r.Owner() != "twice" || r.Manager() != m {
		t.Fatal("Owner or Manager wrong")
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(); !errors.Is(err, ErrReleased) || !strings.Contains(err.Error(), "twice") {
		t.Errorf("second Release: %v", err)
	}
	if err := r.Grow(1); !errors.Is(err, ErrReleased) {
		t.Errorf("Grow after Release: %v", err)
	}
	if _, err := r.Segment(); !errors.Is(err, ErrReleased) {
		t.Errorf("Segment after Release: %v", err)
	}
	r.Shrink(1)
	r.FreeSegment(make([]byte, 4096))
	if m.Used() != 0 {
		t.Errorf("Used after use-after-release = %d", m.Used())
	}
	closeManager(t, m)
}

// TestManagerConcurrent runs reservations of many goroutines against one budget
// and checks that the manager never hands out more than it has (run with -race).
func TestManagerConcurrent(t *testing.T) {
	const budget = 16 * 4096
	m := MustNewManager(Options{SegmentSize: 4096, Budget: budget})
	var over atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := m.NewReservation("worker")
			defer func() { _ = r.Release() }()
			var held [][]byte
			for i := 0; i < 2000; i++ {
				switch (i + g) % 4 {
				case 0, 1:
					if s, err := r.Segment(); err == nil {
						s[0] = byte(g) // the segment is ours: the race detector checks it
						held = append(held, s)
					} else if !errors.Is(err, ErrBudgetExceeded) {
						t.Error(err)
						return
					}
				case 2:
					if err := r.Grow(1000); err == nil {
						r.Shrink(1000)
					}
				case 3:
					if len(held) > 0 {
						r.FreeSegment(held[len(held)-1])
						held = held[:len(held)-1]
					}
				}
				if u := m.Used(); u > budget {
					over.Store(u)
				}
			}
		}()
	}
	wg.Wait()
	if o := over.Load(); o != 0 {
		t.Errorf("Used reached %d over a budget of %d", o, budget)
	}
	if m.Used() != 0 || m.Peak() > budget || m.Peak() == 0 {
		t.Errorf("Used %d Peak %d", m.Used(), m.Peak())
	}
	closeManager(t, m)
}

// TestFloor checks that a reservation with a floor grows past the budget up to
// the floor and no further, and the floor a manager suggests.
func TestFloor(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4 << 10, Budget: 64 << 10})
	hog := m.NewReservation("hog")
	if err := hog.Grow(64 << 10); err != nil {
		t.Fatal(err)
	}
	r := m.NewReservation("floored")
	if err := r.Grow(1); err == nil {
		t.Fatal("Grow past the budget without a floor succeeded")
	}
	r.SetFloor(16 << 10)
	if err := r.Grow(8 << 10); err != nil {
		t.Fatalf("Grow under the floor: %v", err)
	}
	if _, err := r.Segment(); err != nil {
		t.Fatalf("Segment under the floor: %v", err)
	}
	if err := r.Grow(4<<10 + 1); err == nil {
		t.Fatal("Grow past the floor succeeded")
	}
	if _, err := r.Segment(); err != nil {
		t.Fatalf("Segment up to the floor: %v", err)
	}
	if _, err := r.Segment(); err == nil {
		t.Fatal("Segment past the floor succeeded")
	}
	if got, want := m.Used(), int64(64<<10+16<<10); got != want {
		t.Fatalf("Used() = %d, want %d", got, want)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if err := hog.Release(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ budget, want int64 }{
		{0, 0},
		{1 << 20, 128 << 10},
		{4 << 20, MinFloor},
		{32 << 20, 1 << 20},
		{128 << 20, MaxFloor},
		{8 << 30, MaxFloor},
	} {
		if got := MustNewManager(Options{Budget: tc.budget}).Floor(); got != tc.want {
			t.Errorf("Floor() with budget %d = %d, want %d", tc.budget, got, tc.want)
		}
	}
}
