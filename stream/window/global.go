package window

// Global assigns every element to the one GlobalWindow; its default trigger
// never fires (Flink's GlobalWindows).
type Global struct{}

// GlobalWindows returns the global window assigner.
func GlobalWindows() Global { return Global{} }

// AssignWindows returns the GlobalWindow.
func (Global) AssignWindows(_ any, _ int64, _ AssignerContext, dst []GlobalWindow) ([]GlobalWindow, error) {
	return append(dst, GlobalWindow{}), nil
}

// DefaultTrigger is NeverTrigger.
func (Global) DefaultTrigger() Trigger[GlobalWindow] { return NeverTrigger[GlobalWindow]{} }

// IsEventTime is false: global windows are cleaned up by nothing.
func (Global) IsEventTime() bool { return false }
