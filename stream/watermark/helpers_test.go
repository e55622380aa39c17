package watermark

import (
	"fmt"
	"time"

	"github.com/weirdata/weir/clock"
)

// testingOutput records what it is told, as Flink's TestingWatermarkOutput:
// the last watermark and whether the output is idle; calls lists every call.
type testingOutput struct {
	last    int64
	emitted bool
	idle    bool
	calls   []string
}

func (o *testingOutput) EmitWatermark(wm int64) {
	o.last, o.emitted, o.idle = wm, true, false
	o.calls = append(o.calls, fmt.Sprint(wm))
}

func (o *testingOutput) MarkIdle() {
	o.idle = true
	o.calls = append(o.calls, "idle")
}

func (o *testingOutput) MarkActive() {
	o.idle = false
	o.calls = append(o.calls, "active")
}

// lastWatermark returns the last watermark and whether there was one.
func (o *testingOutput) lastWatermark() (int64, bool) { return o.last, o.emitted }

// newManualClock returns a clock a test moves, as Flink's ManualClock.
func newManualClock() *clock.Manual {
	return clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func itoa(v int64) string { return fmt.Sprint(v) }
