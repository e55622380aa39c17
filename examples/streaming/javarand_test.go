package streaming

import "testing"

// TestJavaRandom checks the generator against values java.util.Random gives
// for the same seeds.
func TestJavaRandom(t *testing.T) {
	if got := newJavaRandom(0).next(32); got != -1155484576 {
		t.Errorf("new Random(0).nextInt() = %d, want -1155484576", got)
	}
	if got := newJavaRandom(42).next(32); got != -1170105035 {
		t.Errorf("new Random(42).nextInt() = %d, want -1170105035", got)
	}
	if got := newJavaRandom(0).nextDouble(); got != 0.730967787376657 {
		t.Errorf("new Random(0).nextDouble() = %v, want 0.730967787376657", got)
	}
	if got := newJavaRandom(0).nextFloat(); got != 0.73096776 {
		t.Errorf("new Random(0).nextFloat() = %v, want 0.73096776", got)
	}
	// nextInt(bound) is below bound, power of two or not
	r := newJavaRandom(5)
	for _, b := range []int32{1, 2, 7, 16, 1000, 2147483647} {
		for range 1000 {
			if v := r.nextInt(b); v < 0 || v >= b {
				t.Fatalf("nextInt(%d) = %d", b, v)
			}
		}
	}
}

func TestAlertString(t *testing.T) {
	for _, c := range []struct {
		a    Alert
		want string
	}{
		{Alert{Address: 2012, State: StateW, Transition: EventC}, "ALERT 0.0.7.220 : W -> c"},
		{Alert{Address: -1, State: Initial, Transition: EventG}, "ALERT 255.255.255.255 : Initial -> g"},
		{Alert{Address: 0x0a000001, State: StateZ, Transition: EventA}, "ALERT 10.0.0.1 : Z -> a"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.a, got, c.want)
		}
	}
}

// TestEventsGeneratorValid: without errors every generated event is a valid
// transition of its address's machine (Flink's generator and state machine
// agree), and the generator keeps at most about 1000 machines.
func TestEventsGeneratorValid(t *testing.T) {
	g, err := NewEventsGenerator(9, 0)
	if err != nil {
		t.Fatal(err)
	}
	states := map[int32]State{}
	for i := range 50000 {
		e := g.Next(0, 1<<20)
		s, ok := states[e.Address]
		if !ok {
			s = Initial
		}
		next := s.Transition(e.Type)
		if next == InvalidTransition {
			t.Fatalf("event %d: %v invalid in state %v", i, e, s)
		}
		if next.IsTerminal() {
			delete(states, e.Address)
		} else {
			states[e.Address] = next
		}
		if len(g.order) != len(states) || len(states) > 1001 {
			t.Fatalf("event %d: generator holds %d machines, the state machine %d", i, len(g.order), len(states))
		}
	}
	if _, err := NewEventsGenerator(1, 1.5); err == nil {
		t.Error("error probability 1.5 accepted")
	}
}
