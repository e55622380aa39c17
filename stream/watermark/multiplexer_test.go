package watermark

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// newMux returns a multiplexer over a testing output.
func newMux() (*Multiplexer, *testingOutput) {
	out := &testingOutput{}
	return NewMultiplexer(out), out
}

var outputIDs int

// output registers a new output and returns its immediate or deferred form,
// as the createImmediateOutput and createDeferredOutput helpers of Flink's
// test.
func output(t *testing.T, m *Multiplexer, immediate bool) Output {
	t.Helper()
	outputIDs++
	id := fmt.Sprint("out-", outputIDs)
	if err := m.Register(id); err != nil {
		t.Fatal(err)
	}
	var o Output
	var err error
	if immediate {
		o, err = m.Immediate(id)
	} else {
		o, err = m.Deferred(id)
	}
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func wantNone(t *testing.T, out *testingOutput) {
	t.Helper()
	if wm, ok := out.lastWatermark(); ok {
		t.Fatalf("emitted %d, want nothing", wm)
	}
}

func wantIdle(t *testing.T, out *testingOutput, idle bool) {
	t.Helper()
	if out.idle != idle {
		t.Fatalf("idle %v, want %v (calls %v)", out.idle, idle, out.calls)
	}
}

// TestMultiplexer follows Flink's WatermarkOutputMultiplexerTest, the cases
// that hold on the release-1.20 line (later Flink versions flush the largest
// watermark when every output is idle and mark a resumed output active; 1.20
// does neither, see allIdleKeepsTheWatermark).
func TestMultiplexer(t *testing.T) {
	t.Run("singleImmediateWatermark", func(t *testing.T) {
		m, out := newMux()
		output(t, m, true).EmitWatermark(0)
		wantLast(t, out, 0)
		wantIdle(t, out, false)
	})
	t.Run("singleImmediateIdleness", func(t *testing.T) {
		m, out := newMux()
		output(t, m, true).MarkIdle()
		wantNone(t, out)
		wantIdle(t, out, true)
	})
	t.Run("singleImmediateWatermarkAfterIdleness", func(t *testing.T) {
		m, out := newMux()
		o := output(t, m, true)
		o.MarkIdle()
		wantIdle(t, out, true)
		o.EmitWatermark(0)
		wantLast(t, out, 0)
		wantIdle(t, out, false)
	})
	t.Run("multipleImmediateWatermark", func(t *testing.T) {
		m, out := newMux()
		o1, o2, o3 := output(t, m, true), output(t, m, true), output(t, m, true)
		o1.EmitWatermark(2)
		o2.EmitWatermark(5)
		o3.MarkIdle()
		wantLast(t, out, 2)
		wantIdle(t, out, false)
	})
	t.Run("whenImmediateOutputBecomesIdleWatermarkAdvances", func(t *testing.T) {
		m, out := newMux()
		o1, o2 := output(t, m, true), output(t, m, true)
		o1.EmitWatermark(2)
		o2.EmitWatermark(5)
		wantLast(t, out, 2)
		o1.MarkIdle()
		wantLast(t, out, 5)
	})
	t.Run("allIdleKeepsTheWatermark", func(t *testing.T) {
		m, out := newMux()
		o1, o2 := output(t, m, true), output(t, m, true)
		o1.EmitWatermark(5)
		o2.EmitWatermark(2)
		o1.MarkIdle()
		o2.MarkIdle()
		wantLast(t, out, 2)
		wantIdle(t, out, true)
		if !m.Idle() || m.Combined() != 2 {
			t.Fatalf("Idle %v Combined %d", m.Idle(), m.Combined())
		}
	})
	t.Run("combinedWatermarkDoesNotRegressWhenIdleOutputRegresses", func(t *testing.T) {
		m, out := newMux()
		o1, o2 := output(t, m, true), output(t, m, true)
		o1.EmitWatermark(2)
		o2.EmitWatermark(5)
		o1.MarkIdle()
		wantLast(t, out, 5)
		o1.EmitWatermark(3)
		wantLast(t, out, 5)
	})
	t.Run("noCombinedDeferredUpdateWhenWeHaveZeroOutputs", func(t *testing.T) {
		m, out := newMux()
		m.OnPeriodicEmit()
		wantNone(t, out)
		wantIdle(t, out, false)
	})
	t.Run("deferredOutputDoesNotImmediatelyAdvanceWatermark", func(t *testing.T) {
		m, out := newMux()
		o1, o2 := output(t, m, false), output(t, m, false)
		o1.EmitWatermark(0)
		o2.EmitWatermark(1)
		wantNone(t, out)
		m.OnPeriodicEmit()
		wantLast(t, out, 0)
	})
	t.Run("singleDeferredWatermark", func(t *testing.T) {
		m, out := newMux()
		output(t, m, false).EmitWatermark(0)
		m.OnPeriodicEmit()
		wantLast(t, out, 0)
		wantIdle(t, out, false)
	})
	t.Run("singleDeferredIdleness", func(t *testing.T) {
		m, out := newMux()
		output(t, m, false).MarkIdle()
		m.OnPeriodicEmit()
		wantNone(t, out)
		wantIdle(t, out, true)
	})
	t.Run("singleDeferredWatermarkAfterIdleness", func(t *testing.T) {
		m, out := newMux()
		o := output(t, m, false)
		o.MarkIdle()
		m.OnPeriodicEmit()
		wantIdle(t, out, true)
		o.EmitWatermark(0)
		m.OnPeriodicEmit()
		wantLast(t, out, 0)
		wantIdle(t, out, false)
	})
	t.Run("multipleDeferredWatermark", func(t *testing.T) {
		m, out := newMux()
		o1, o2, o3 := output(t, m, false), output(t, m, false), output(t, m, false)
		o1.EmitWatermark(2)
		o2.EmitWatermark(5)
		o3.MarkIdle()
		m.OnPeriodicEmit()
		wantLast(t, out, 2)
		wantIdle(t, out, false)
	})
	t.Run("immediateUpdatesTakeDeferredUpdatesIntoAccount", func(t *testing.T) {
		m, out := newMux()
		imm, def := output(t, m, true), output(t, m, false)
		def.EmitWatermark(5)
		wantNone(t, out)
		imm.EmitWatermark(2)
		wantLast(t, out, 2)
	})
	t.Run("immediateUpdateOnSameOutputAsDeferredUpdateDoesNotRegress", func(t *testing.T) {
		m, out := newMux()
		if err := m.Register("test-id"); err != nil {
			t.Fatal(err)
		}
		imm, _ := m.Immediate("test-id")
		def, _ := m.Deferred("test-id")
		def.EmitWatermark(5)
		m.OnPeriodicEmit()
		wantLast(t, out, 5)
		imm.EmitWatermark(2)
		wantLast(t, out, 5)
		m.OnPeriodicEmit()
		wantLast(t, out, 5)
	})
	t.Run("lowerImmediateUpdateOnSameOutputDoesNotEmitCombinedUpdate", func(t *testing.T) {
		m, out := newMux()
		if err := m.Register("1234-test"); err != nil {
			t.Fatal(err)
		}
		imm, _ := m.Immediate("1234-test")
		def, _ := m.Deferred("1234-test")
		def.EmitWatermark(5)
		imm.EmitWatermark(2)
		wantNone(t, out)
	})
	t.Run("testRemoveUnblocksWatermarks", func(t *testing.T) {
		m, out := newMux()
		const low, high = 156765, 156775
		_ = m.Register("lower")
		_ = m.Register("higher")
		lower, _ := m.Immediate("lower")
		lower.EmitWatermark(low)
		m.Unregister("lower")
		higher, _ := m.Immediate("higher")
		higher.EmitWatermark(high)
		wantLast(t, out, high)
	})
	t.Run("testRemoveOfLowestDoesNotImmediatelyAdvanceWatermark", func(t *testing.T) {
		m, out := newMux()
		const low, high = -4343, -4333
		_ = m.Register("lower")
		_ = m.Register("higher")
		lower, _ := m.Immediate("lower")
		higher, _ := m.Immediate("higher")
		lower.EmitWatermark(low)
		higher.EmitWatermark(high)
		m.Unregister("lower")
		wantLast(t, out, low)
	})
	t.Run("testRemoveOfHighestDoesNotRetractWatermark", func(t *testing.T) {
		m, out := newMux()
		_ = m.Register("higher")
		higher, _ := m.Immediate("higher")
		higher.EmitWatermark(2)
		m.Unregister("higher")
		_ = m.Register("lower")
		lower, _ := m.Immediate("lower")
		lower.EmitWatermark(1)
		wantLast(t, out, 2)
	})
	t.Run("testRemoveRegisteredReturnValue", func(t *testing.T) {
		m, _ := newMux()
		_ = m.Register("does-exist")
		if !m.Unregister("does-exist") {
			t.Fatal("Unregister of a registered output returned false")
		}
	})
	t.Run("testRemoveNotRegisteredReturnValue", func(t *testing.T) {
		m, _ := newMux()
		if m.Unregister("does-not-exist") {
			t.Fatal("Unregister of an unknown output returned true")
		}
	})
	t.Run("whenRegisteredOutputReportsNothingNothingIsReported", func(t *testing.T) {
		m, out := newMux()
		_ = m.Register("silent-output")
		m.OnPeriodicEmit()
		if len(out.calls) != 0 {
			t.Fatalf("reported %v", out.calls)
		}
	})
	t.Run("registerErrors", func(t *testing.T) {
		m, _ := newMux()
		_ = m.Register("a")
		if err := m.Register("a"); err == nil {
			t.Error("a second Register of one id was accepted")
		}
		if _, err := m.Immediate("b"); err == nil {
			t.Error("Immediate of an unknown id was accepted")
		}
		if _, err := m.Deferred("b"); err == nil {
			t.Error("Deferred of an unknown id was accepted")
		}
	})
}

// TestMultiplexerRandom drives random outputs, immediate and deferred, with
// random watermarks, idleness, registrations and periodic emissions, and
// checks every report against a model of the outputs' states: a watermark
// is emitted only when it rises, and equals the minimum over the outputs
// that are not idle; idle is reported only when every output is idle; after
// a periodic emission the combined watermark is the larger of the previous
// one and that minimum; and an immediate call reports no later than the
// periodic emission would.
func TestMultiplexerRandom(t *testing.T) {
	type state struct {
		wm   int64
		idle bool
	}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 3))
		m, out := newMux()
		model := map[string]*state{}
		var ids []string
		next := 0
		combined := Min
		// check verifies what the last call reported against the model
		check := func(step int, what string, from int) {
			lowest, allIdle := Max, true
			for _, s := range model {
				if !s.idle {
					lowest, allIdle = min(lowest, s.wm), false
				}
			}
			for _, c := range out.calls[from:] {
				switch c {
				case "idle":
					if !allIdle || len(model) == 0 {
						t.Fatalf("seed %d step %d (%s): reported idle with active outputs %v", seed, step, what, out.calls[from:])
					}
				case "active":
					t.Fatalf("seed %d step %d (%s): reported active", seed, step, what)
				default:
					var wm int64
					fmt.Sscan(c, &wm)
					if wm <= combined || wm != lowest {
						t.Fatalf("seed %d step %d (%s): emitted %d, previous %d, minimum over active outputs %d", seed, step, what, wm, combined, lowest)
					}
					combined = wm
				}
			}
			if what == "periodic" && len(model) > 0 {
				if allIdle {
					if out.calls[len(out.calls)-1] != "idle" {
						t.Fatalf("seed %d step %d: all idle but not reported", seed, step)
					}
				} else if want := max(combined, lowest); combined != want {
					t.Fatalf("seed %d step %d: combined %d after a periodic emission, want %d", seed, step, combined, want)
				}
			}
			if m.Combined() != combined {
				t.Fatalf("seed %d step %d: Combined() %d, emitted %d", seed, step, m.Combined(), combined)
			}
		}
		for step := range 300 {
			from := len(out.calls)
			op := rng.IntN(10)
			if len(ids) == 0 || op == 0 {
				id := fmt.Sprint(next)
				next++
				if err := m.Register(id); err != nil {
					t.Fatal(err)
				}
				model[id] = &state{wm: Min}
				ids = append(ids, id)
				continue
			}
			k := rng.IntN(len(ids))
			id := ids[k]
			s := model[id]
			var o Output
			immediate := rng.IntN(2) == 0
			if immediate {
				o, _ = m.Immediate(id)
			} else {
				o, _ = m.Deferred(id)
			}
			switch {
			case op == 1:
				m.Unregister(id)
				delete(model, id)
				ids = append(ids[:k], ids[k+1:]...)
			case op <= 5:
				wm := rng.Int64N(100)
				s.wm, s.idle = max(s.wm, wm), false
				o.EmitWatermark(wm)
			case op == 6:
				s.idle = true
				o.MarkIdle()
			case op == 7:
				s.idle = false
				o.MarkActive()
			default:
				m.OnPeriodicEmit()
				check(step, "periodic", from)
				continue
			}
			check(step, "update", from)
		}
	}
}
