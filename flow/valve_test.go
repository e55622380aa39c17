package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// valveStep is one input to a valve and what it must emit, as a string:
// "" for nothing, "W10" for a watermark, "IDLE"/"ACTIVE" for a status, in
// emission order separated by spaces.
type valveStep struct {
	op   string // "wm", "idle", "active", "end"
	ch   int
	wm   int64
	want string
}

func (o valveOut) String() string {
	var parts []string
	if o.hasWM {
		parts = append(parts, fmt.Sprintf("W%d", o.wm))
	}
	if o.hasStatus {
		if o.status == StatusIdle {
			parts = append(parts, "IDLE")
		} else {
			parts = append(parts, "ACTIVE")
		}
	}
	return strings.Join(parts, " ")
}

func (v *valve) apply(s valveStep) valveOut {
	switch s.op {
	case "wm":
		return v.watermark(s.ch, s.wm)
	case "idle":
		return v.status(s.ch, true)
	case "active":
		return v.status(s.ch, false)
	case "end":
		return v.end(s.ch)
	}
	panic(s.op)
}

func wm(ch int, w int64, want string) valveStep { return valveStep{"wm", ch, w, want} }
func idle(ch int, want string) valveStep        { return valveStep{"idle", ch, 0, want} }
func active(ch int, want string) valveStep      { return valveStep{"active", ch, 0, want} }
func endCh(ch int, want string) valveStep       { return valveStep{"end", ch, 0, want} }

// TestValveFlink ports Flink's StatusWatermarkValveTest (release-1.20) case by
// case: each step feeds the valve and checks it emitted exactly the expected
// watermark and status, and nothing else. The cases after Flink's are weir's
// ended channels.
func TestValveFlink(t *testing.T) {
	cases := []struct {
		name  string
		n     int
		steps []valveStep
		check func(t *testing.T, v *valve)
	}{
		{"SingleInputIncreasingWatermarks", 1, []valveStep{
			wm(0, 0, "W0"), wm(0, 25, "W25"),
		}, nil},
		{"SingleInputDecreasingWatermarksYieldsNoOutput", 1, []valveStep{
			wm(0, 25, "W25"), wm(0, 18, ""), wm(0, 42, "W42"),
		}, nil},
		{"SingleInputWatermarkStatusToggling", 1, []valveStep{
			active(0, ""), idle(0, "IDLE"), idle(0, ""), active(0, "ACTIVE"),
		}, nil},
		{"SingleInputWatermarksIntactDuringIdleness", 1, []valveStep{
			wm(0, 25, "W25"), idle(0, "IDLE"), wm(0, 50, ""),
		}, func(t *testing.T, v *valve) {
			if v.ch[0].wm != 25 {
				t.Fatalf("channel watermark %d during idleness, want 25", v.ch[0].wm)
			}
			for _, s := range []valveStep{active(0, "ACTIVE"), wm(0, 50, "W50")} {
				if got := v.apply(s).String(); got != s.want {
					t.Fatalf("%+v: got %q", s, got)
				}
			}
		}},
		{"MultipleInputYieldsWatermarkOnlyWhenAllChannelsReceivesWatermarks", 3, []valveStep{
			wm(0, 0, ""), wm(1, 0, ""), wm(2, 0, "W0"),
		}, nil},
		{"MultipleInputIncreasingWatermarks", 3, []valveStep{
			wm(0, 0, ""), wm(1, 0, ""), wm(2, 0, "W0"),
			wm(0, 12, ""), wm(2, 8, ""), wm(2, 10, ""),
			wm(1, 15, "W10"), wm(2, 17, "W12"), wm(0, 20, "W15"),
		}, nil},
		{"MultipleInputDecreasingWatermarksYieldsNoOutput", 3, []valveStep{
			wm(0, 25, ""), wm(1, 10, ""), wm(2, 17, "W10"),
			wm(0, 12, ""), wm(1, 8, ""), wm(2, 15, ""),
		}, nil},
		{"MultipleInputWatermarkStatusToggling", 2, []valveStep{
			active(0, ""), active(1, ""), idle(1, ""), idle(0, "IDLE"),
			idle(0, ""), idle(1, ""), active(1, "ACTIVE"), active(0, ""),
		}, nil},
		{"MultipleInputWatermarkAdvancingWithPartiallyIdleChannels", 3, []valveStep{
			wm(0, 15, ""), wm(1, 10, ""), idle(2, "W10"), wm(1, 18, "W15"), wm(0, 20, "W18"),
		}, nil},
		{"MultipleInputWatermarkAdvancingAsChannelsIndividuallyBecomeIdle", 3, []valveStep{
			wm(0, 25, ""), wm(1, 10, ""), wm(2, 17, "W10"), idle(1, "W17"), idle(2, "W25"),
		}, nil},
		{"MultipleInputFlushMaxWatermarkAndWatermarkStatusOnceAllInputsBecomeIdle", 3, []valveStep{
			wm(0, 10, ""), wm(1, 5, ""), wm(2, 3, "W3"),
			idle(0, ""), idle(1, ""), idle(2, "W10 IDLE"),
		}, nil},
		{"MultipleInputWatermarkRealignmentAfterResumeActive", 3, []valveStep{
			wm(0, 10, ""), wm(1, 7, ""), wm(2, 3, "W3"), idle(2, "W7"), active(2, ""),
		}, func(t *testing.T, v *valve) {
			if v.ch[2].aligned {
				t.Fatal("channel 2 aligned right after it turned active below the watermark")
			}
			if got := v.apply(wm(2, 5, "")).String(); got != "" || v.ch[2].wm != 5 {
				t.Fatalf("catching up: emitted %q, channel at %d", got, v.ch[2].wm)
			}
			if got := v.apply(wm(2, 9, "")).String(); got != "" || !v.ch[2].aligned {
				t.Fatalf("caught up: emitted %q, aligned %v", got, v.ch[2].aligned)
			}
			if got := v.apply(wm(1, 12, "")).String(); got != "W9" {
				t.Fatalf("after realignment: emitted %q, want W9", got)
			}
		}},
		{"NoOutputWhenAllActiveChannelsAreUnaligned", 3, []valveStep{
			wm(0, 10, ""), wm(1, 7, ""), idle(2, "W7"), active(2, ""), idle(0, ""), idle(1, ""),
		}, nil},
		// weir: ended channels
		{"EndedChannelNoLongerHoldsBack", 3, []valveStep{
			wm(0, 10, ""), wm(1, 4, ""), wm(2, 7, "W4"), endCh(1, "W7"), endCh(2, "W10"), endCh(0, ""),
		}, nil},
		{"LastActiveChannelEndsAmongIdle", 3, []valveStep{
			wm(0, 10, ""), wm(1, 4, ""), wm(2, 7, "W4"), idle(0, ""), idle(2, ""), endCh(1, "W10 IDLE"),
			active(0, "ACTIVE"), wm(0, 12, "W12"), wm(2, 13, ""), active(2, ""), wm(2, 14, ""), wm(0, 15, "W14"),
		}, nil},
		{"EndedIdleChannel", 2, []valveStep{
			idle(0, ""), endCh(0, ""), wm(0, 50, ""), wm(1, 5, "W5"),
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newValve(tc.n)
			for i, s := range tc.steps {
				if got := v.apply(s).String(); got != s.want {
					t.Fatalf("step %d %+v: emitted %q, want %q", i, s, got, s.want)
				}
			}
			if tc.check != nil {
				tc.check(t, &v)
			}
		})
	}
}

// TestValveRandom feeds random watermarks, statuses and ends to a valve and
// checks it against a naive model: while no channel was ever idle, the
// emitted watermarks are exactly the rises of the minimum over the channels
// not ended; always, watermarks only rise and never pass the largest channel
// watermark, statuses alternate (IDLE first) and IDLE is emitted exactly
// when the last active channel stops, ACTIVE when the first one resumes.
func TestValveRandom(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		n := 1 + r.IntN(5)
		withIdle := seed%2 == 1
		v := newValve(n)
		marks := make([]int64, n)
		for i := range marks {
			marks[i] = math.MinInt64
		}
		idleCh := make([]bool, n)
		ended := make([]bool, n)
		modelLast, last := int64(math.MinInt64), int64(math.MinInt64)
		statusIdle := false
		activeCount := func() int {
			k := 0
			for i := range idleCh {
				if !idleCh[i] && !ended[i] {
					k++
				}
			}
			return k
		}
		for step := 0; step < 200; step++ {
			c := r.IntN(n)
			before := activeCount()
			var o valveOut
			switch x := r.IntN(20); {
			case x == 0:
				o = v.end(c)
				if !ended[c] {
					ended[c] = true
				}
			case withIdle && x < 4:
				o = v.status(c, true)
				if !ended[c] {
					idleCh[c] = true
				}
			case withIdle && x < 7:
				o = v.status(c, false)
				if !ended[c] {
					idleCh[c] = false
				}
			default:
				w := r.Int64N(100) + int64(step)
				o = v.watermark(c, w)
				if !ended[c] && !idleCh[c] && before > 0 && w > marks[c] {
					marks[c] = w
				}
			}
			after := activeCount()
			if o.hasWM {
				if o.wm <= last {
					t.Fatalf("seed %d step %d: watermark %d after %d", seed, step, o.wm, last)
				}
				if o.wm > slices.Max(marks) {
					t.Fatalf("seed %d step %d: watermark %d above every channel %v", seed, step, o.wm, marks)
				}
				last = o.wm
			}
			live := 0
			for _, e := range ended {
				if !e {
					live++
				}
			}
			wantIdle, wantActive := before > 0 && after == 0 && live > 0, before == 0 && after > 0
			if o.hasStatus != (wantIdle || wantActive) || (o.hasStatus && (o.status == StatusIdle) != wantIdle) {
				t.Fatalf("seed %d step %d: emitted %q with %d then %d active channels", seed, step, o, before, after)
			}
			if o.hasStatus {
				if (o.status == StatusIdle) == statusIdle {
					t.Fatalf("seed %d step %d: status %q twice", seed, step, o)
				}
				statusIdle = o.status == StatusIdle
			}
			if !withIdle {
				m, some := int64(math.MaxInt64), false
				for i := range marks {
					if !ended[i] {
						m, some = min(m, marks[i]), true
					}
				}
				want := ""
				if some && m > modelLast {
					modelLast = m
					want = fmt.Sprintf("W%d", m)
				}
				if got := o.String(); got != want {
					t.Fatalf("seed %d step %d: emitted %q, model %q (marks %v ended %v)", seed, step, got, want, marks, ended)
				}
			}
		}
	}
}

// TestCombinedTwoInputs follows Flink's AbstractStreamOperator for two inputs
// with IndexedCombinedWatermarkStatus: the task's watermark is the minimum
// over the inputs that are not idle, a watermark makes its input active, the
// status is emitted when every input turned idle or the first turned active
// again; an ended input no longer counts.
func TestCombinedTwoInputs(t *testing.T) {
	c := newCombined(2)
	type step struct {
		op     string
		in     int
		wm     int64
		rose   bool
		cur    int64
		allIdl bool
	}
	steps := []step{
		{"wm", 0, 5, false, math.MinInt64, false},
		{"wm", 1, 3, true, 3, false},
		{"idle", 1, 0, true, 5, false},
		{"wm", 0, 7, true, 7, false},
		{"idle", 0, 0, false, 7, true},
		{"active", 1, 0, false, 7, false},
		{"wm", 1, 9, true, 9, false},
		{"active", 0, 0, false, 9, false},
		{"wm", 0, 8, false, 9, false},
		{"wm", 0, 12, false, 9, false},
		{"wm", 1, 15, true, 12, false},
		{"end", 1, 0, false, 12, false},
		{"wm", 0, 20, true, 20, false},
	}
	for i, s := range steps {
		var rose bool
		switch s.op {
		case "wm":
			rose = c.watermark(s.in, s.wm)
		case "idle":
			rose = c.status(s.in, true)
		case "active":
			rose = c.status(s.in, false)
		case "end":
			rose = c.end(s.in)
		}
		if rose != s.rose || c.cur != s.cur || c.all != s.allIdl {
			t.Fatalf("step %d %+v: rose %v, watermark %d, all idle %v", i, s, rose, c.cur, c.all)
		}
	}
}
