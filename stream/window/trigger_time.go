package window

// EventTimeTrigger fires a window once the watermark passes its end (Flink's
// EventTimeTrigger): at once for an element of a window the watermark
// already passed, else by a timer at the window's MaxTimestamp.
type EventTimeTrigger struct{}

// OnElement fires or registers the end-of-window timer.
func (EventTimeTrigger) OnElement(_ any, _ int64, w TimeWindow, ctx TriggerContext) (TriggerResult, error) {
	return eventTimeOnElement(w, ctx), nil
}

func eventTimeOnElement[W Window](w W, ctx TriggerContext) TriggerResult {
	if w.MaxTimestamp() <= ctx.CurrentWatermark() {
		return Fire
	}
	ctx.RegisterEventTimeTimer(w.MaxTimestamp())
	return Continue
}

// OnEventTime fires at the window's end.
func (EventTimeTrigger) OnEventTime(time int64, w TimeWindow, _ TriggerContext) (TriggerResult, error) {
	if time == w.MaxTimestamp() {
		return Fire, nil
	}
	return Continue, nil
}

// OnProcessingTime does nothing.
func (EventTimeTrigger) OnProcessingTime(int64, TimeWindow, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// CanMerge is true.
func (EventTimeTrigger) CanMerge() bool { return true }

// OnMerge registers the merged window's end timer unless the watermark
// passed it.
func (EventTimeTrigger) OnMerge(w TimeWindow, ctx OnMergeContext) error {
	if m := w.MaxTimestamp(); m > ctx.CurrentWatermark() {
		ctx.RegisterEventTimeTimer(m)
	}
	return nil
}

// Clear deletes the end-of-window timer.
func (EventTimeTrigger) Clear(w TimeWindow, ctx TriggerContext) error {
	ctx.DeleteEventTimeTimer(w.MaxTimestamp())
	return nil
}

func (EventTimeTrigger) String() string { return "EventTimeTrigger()" }

// ProcessingTimeTrigger fires a window when the processing time reaches
// its MaxTimestamp (Flink's ProcessingTimeTrigger).
type ProcessingTimeTrigger struct{}

// OnElement registers the end-of-window timer.
func (ProcessingTimeTrigger) OnElement(_ any, _ int64, w TimeWindow, ctx TriggerContext) (TriggerResult, error) {
	ctx.RegisterProcessingTimeTimer(w.MaxTimestamp())
	return Continue, nil
}

// OnEventTime does nothing.
func (ProcessingTimeTrigger) OnEventTime(int64, TimeWindow, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// OnProcessingTime fires.
func (ProcessingTimeTrigger) OnProcessingTime(int64, TimeWindow, TriggerContext) (TriggerResult, error) {
	return Fire, nil
}

// CanMerge is true.
func (ProcessingTimeTrigger) CanMerge() bool { return true }

// OnMerge registers the merged window's end timer unless processing time
// passed it.
func (ProcessingTimeTrigger) OnMerge(w TimeWindow, ctx OnMergeContext) error {
	if m := w.MaxTimestamp(); m > ctx.CurrentProcessingTime() {
		ctx.RegisterProcessingTimeTimer(m)
	}
	return nil
}

// Clear deletes the end-of-window timer.
func (ProcessingTimeTrigger) Clear(w TimeWindow, ctx TriggerContext) error {
	ctx.DeleteProcessingTimeTimer(w.MaxTimestamp())
	return nil
}

func (ProcessingTimeTrigger) String() string { return "ProcessingTimeTrigger()" }

// NeverTrigger never fires: the default trigger of GlobalWindows.
type NeverTrigger[W Window] struct{}

// OnElement continues.
func (NeverTrigger[W]) OnElement(any, int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// OnEventTime continues.
func (NeverTrigger[W]) OnEventTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// OnProcessingTime continues.
func (NeverTrigger[W]) OnProcessingTime(int64, W, TriggerContext) (TriggerResult, error) {
	return Continue, nil
}

// CanMerge is true: there is nothing to merge.
func (NeverTrigger[W]) CanMerge() bool { return true }

// OnMerge does nothing.
func (NeverTrigger[W]) OnMerge(W, OnMergeContext) error { return nil }

// Clear does nothing.
func (NeverTrigger[W]) Clear(W, TriggerContext) error { return nil }
