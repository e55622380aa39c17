package state

import "testing"

// TestClear: Clear drops every state's entries and every timer, returns
// their bytes, and the states and timers stay usable.
func TestClear(t *testing.T) {
	b, err := NewBackend[string](Options{Name: "clear", MaxParallelism: 4, Groups: KeyGroupRange{Start: 0, End: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Dispose()
	v, err := GetValueState(b, ValueDescriptor[int]{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := GetListState(b, ListDescriptor[string]{Name: "l"})
	if err != nil {
		t.Fatal(err)
	}
	tm, err := NewTimers[string, Void](b, "t", nopTarget{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		b.SetCurrentKey(k)
		v.Update(len(k))
		l.Add(k)
		tm.RegisterEventTimeTimer(Void{}, 7)
	}
	if b.MemoryUsed() == 0 || tm.NumEventTimeTimers() != 3 {
		t.Fatalf("before: %d bytes, %d timers", b.MemoryUsed(), tm.NumEventTimeTimers())
	}
	b.Clear()
	if b.MemoryUsed() != 0 || tm.NumEventTimeTimers() != 0 {
		t.Fatalf("after Clear: %d bytes, %d timers", b.MemoryUsed(), tm.NumEventTimeTimers())
	}
	for _, k := range []string{"a", "b", "c"} {
		b.SetCurrentKey(k)
		if x, ok := v.Value(); ok || len(l.Get()) != 0 {
			t.Fatalf("%s: value %d %v, list %v after Clear", k, x, ok, l.Get())
		}
	}
	b.SetCurrentKey("a")
	v.Update(9)
	if x, _ := v.Value(); x != 9 || b.Err() != nil {
		t.Fatalf("after Clear: %d, %v", x, b.Err())
	}
}

type nopTarget struct{}

func (nopTarget) OnEventTime(Timer[string, Void]) error      { return nil }
func (nopTarget) OnProcessingTime(Timer[string, Void]) error { return nil }
