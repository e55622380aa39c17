package window

// Global assigns every element to the one GlobalWindow; its default trigger
// never fires (Flink's GlobalWindows), or fires once at the end of a
// bounded input (GlobalWindowsWithEndOfStreamTrigger).
type Global struct{ endOfStream bool }

// GlobalWindows returns the global window assigner, whose windows fire only
// by a trigger the program sets.
func GlobalWindows() Global { return Global{} }

// GlobalWindowsWithEndOfStreamTrigger returns the global window assigner
// whose default trigger fires when the input ends (the maximal watermark),
// as Flink's GlobalWindows.createWithEndOfStreamTrigger.
func GlobalWindowsWithEndOfStreamTrigger() Global { return Global{endOfStream: true} }

// AssignWindows returns the GlobalWindow.
func (Global) AssignWindows(_ any, _ int64, _ AssignerContext, dst []GlobalWindow) ([]GlobalWindow, error) {
	return append(dst, GlobalWindow{}), nil
}

// DefaultTrigger is NeverTrigger, or EndOfStreamTrigger.
func (g Global) DefaultTrigger() Trigger[GlobalWindow] {
	if g.endOfStream {
		return EndOfStreamTrigger{}
	}
	return NeverTrigger[GlobalWindow]{}
}

// IsEventTime is false: global windows are cleaned up by nothing.
func (Global) IsEventTime() bool { return false }

// EndOfStreamTrigger fires a global window when the watermark reaches the
// end of time, that is when a bounded input ends (Flink's
// GlobalWindows.EndOfStreamTrigger).
type EndOfStreamTrigger struct{}

// OnElement registers the end-of-time timer.
func (EndOfStreamTrigger) OnElement(_ any, _ int64, w GlobalWindow, ctx TriggerContext) (TriggerResult, error) {
	ctx.RegisterEventTimeTimer(w.MaxTimestamp())
	return Continue, nil
}

// OnEventTime fires at the end of time.
func (EndOfStreamTrigger) OnEventTime(time int64, w GlobalWindow, _ TriggerContext) (TriggerResult, error) {
	if time == w.MaxTimestamp() {
		return Fire, nil
	}
	return Continue, nil
}

// OnProcessingTime continues.
func (EndOfStreamTrigger) OnProcessingTime(int64, GlobalWindow, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// CanMerge is true: there is nothing to merge.
func (EndOfStreamTrigger) CanMerge() bool { return true }

// OnMerge does nothing.
func (EndOfStreamTrigger) OnMerge(GlobalWindow, OnMergeContext) error { return nil }

// Clear deletes the end-of-time timer.
func (EndOfStreamTrigger) Clear(w GlobalWindow, ctx TriggerContext) error {
	ctx.DeleteEventTimeTimer(w.MaxTimestamp())
	return nil
}
