package flow

// lifecycle is what a task's operators registered to run when it exits (see
// TaskContext.OnExit, OnEnd and Keep).
type lifecycle struct {
	exit []func()    // OnExit: when the body returns, or at the end of each superstep
	end  []func()    // OnEnd and Keep's releases: when the task ends
	kept map[any]any // Keep: what lasts from one superstep to the next
	// iterative is set by Iteration.Run: the body runs once per superstep
	iterative bool
}

// OnExit registers f to run when the task's body returns, on every path
// (success, error, panic). In a task that Iteration.Run drives, f runs at the
// end of the superstep it was registered in: what a superstep's operators
// hold (reservations, spill files, sorters) goes then, not when the task
// ends. The functions registered run last first.
func (tc *TaskContext) OnExit(f func()) { tc.life.exit = append(tc.life.exit, f) }

// OnEnd registers f to run when the task ends, after the OnExit functions:
// in a task that Iteration.Run drives, after its last superstep. The
// functions registered run last first.
func (tc *TaskContext) OnEnd(f func()) { tc.life.end = append(tc.life.end, f) }

// Keep stores v under key for the later supersteps of a task that
// Iteration.Run drives, where Kept finds it, and registers release to run
// when the task ends (as OnEnd does): how an operator keeps a hash table
// across supersteps. In a task without supersteps it stores nothing and
// registers release as OnExit does.
func (tc *TaskContext) Keep(key, v any, release func()) {
	if !tc.life.iterative {
		tc.OnExit(release)
		return
	}
	if tc.life.kept == nil {
		tc.life.kept = map[any]any{}
	}
	tc.life.kept[key] = v
	tc.OnEnd(release)
}

// Kept returns what Keep stored under key, or nil.
func (tc *TaskContext) Kept(key any) any { return tc.life.kept[key] }

// Drop forgets what Keep stored under key; its release still runs when the
// task ends.
func (tc *TaskContext) Drop(key any) { delete(tc.life.kept, key) }

// exitRun runs the OnExit functions, last first, and forgets them.
func (tc *TaskContext) exitRun() {
	fs := tc.life.exit
	tc.life.exit = nil
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// endTask runs the OnExit functions, then the OnEnd functions, last first,
// and forgets what was kept. The runtime calls it when the body returned.
func (tc *TaskContext) endTask() {
	tc.exitRun()
	fs := tc.life.end
	tc.life.end, tc.life.kept = nil, nil
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
