package state

import (
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestHeapLimit: live data the estimate does not count (here a slice held
// beside the state) makes heap state past the soft memory limit an
// ErrHeapLimit error naming the limit; without a limit, or with the live data
// released, the same writes succeed.
func TestHeapLimit(t *testing.T) {
	const limit = 64 << 20 // memory.Managed leaves 32 MiB, the check 30 MiB
	write := func(t *testing.T) error {
		b, _ := newBackend[int64](t, 128, KeyGroupRange{0, 127}, 0, nil)
		defer b.Dispose()
		s, _ := GetValueState(b, ValueDescriptor[int64]{Name: "v"})
		for i := int64(0); i < 40000 && b.Err() == nil; i++ { // about 3.4 MiB counted
			b.SetCurrentKey(i)
			s.Update(i)
		}
		return b.Err()
	}
	ballast := make([]byte, 48<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	runtime.GC()
	if err := write(t); err != nil {
		t.Fatalf("without a limit: %v", err)
	}

	old := debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(old)
	runtime.GC()
	runtime.GC()
	err := write(t)
	if !errors.Is(err, ErrHeapLimit) || !strings.Contains(err.Error(), `ValueState "v"`) || !strings.Contains(err.Error(), "limit of 64.0 MiB") {
		t.Fatalf("48 MiB live under a limit of 64 MiB: Err() = %v", err)
	}
	runtime.KeepAlive(ballast)

	ballast = nil
	runtime.GC()
	runtime.GC()
	if err := write(t); err != nil {
		t.Fatalf("the live data released: %v", err)
	}
}
