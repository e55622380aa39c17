package stream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/window"
)

// TestInlineWindowErrors: assigners and triggers are written inline; one
// made with invalid parameters is a build error naming the caller's line
// and the constructor's complaint, and nothing runs.
func TestInlineWindowErrors(t *testing.T) {
	env := New(Options{Parallelism: 1})
	ks := KeyBy(FromSlice(env, []int{1, 2}), func(v int) int { return v })
	ws := Window(ks, window.TumblingEventTimeWindows(0))
	Window(ks, window.SlidingEventTimeWindows(time.Second, 2*time.Second, 3*time.Second))
	Window(ks, window.EventTimeSessionWindows(time.Second)).Trigger(window.PurgingTriggerOf[window.TimeWindow](window.CountTriggerOf[window.TimeWindow](0)))
	WindowJoin(FromSlice(env, []int{1}), FromSlice(env, []int{2}), func(v int) int { return v }, func(v int) int { return v }, window.TumblingEventTimeWindows(time.Second, time.Second))
	_ = ws
	_, err := env.Execute(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"window_build_err_test.go:18: window: TumblingEventTimeWindows parameters must satisfy abs(offset) < size",
		"window_build_err_test.go:19: window: SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0",
		"window_build_err_test.go:20: window: CountTrigger: count 0 must be positive",
		"window_build_err_test.go:21: window: TumblingEventTimeWindows parameters must satisfy abs(offset) < size",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
