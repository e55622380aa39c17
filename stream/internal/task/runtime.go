package task

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// StateBackend is where keyed operators keep their keyed state.
type StateBackend uint8

// The state backends (stream.HeapBackend and stream.DiskBackend).
const (
	HeapBackend StateBackend = iota
	DiskBackend
)

// Config is what a subtask runs with besides its chain.
type Config struct {
	// Job and Attempt name the job attempt; Vertex is the stable id of the
	// task's head operator and Name the task's name.
	Job     string
	Attempt int
	Vertex  string
	Name    string
	// Batch: the job runs in BATCH mode (keyed inputs sorted, event time
	// still until the end of input).
	Batch bool
	// BatchSize is the number of records per batch.
	BatchSize int
	// Clock is the processing-time clock; nil means the task context's.
	Clock clock.Clock
	// AutoWatermarkInterval is how often a source asks its watermark
	// generators for a watermark.
	AutoWatermarkInterval time.Duration
	// SourceRate throttles a source to this many records per second over
	// all its subtasks; zero reads at full speed.
	SourceRate float64
	// StateBackend and TmpDir: where keyed state is kept.
	StateBackend StateBackend
	TmpDir       string
	// Checkpoints, nil without checkpoints.
	Checkpoints *Checkpoints
	// Restore is what the task opens from; nil starts empty.
	Restore *protocol.TaskRestore
	// SideOutputs, when set, receives the records of side outputs no
	// stream reads (a test harness captures them): see core.Ctx.
	SideOutputs func(id string, mk func() any) any
}

// Checkpoints is a task's part of the job's checkpointing.
type Checkpoints struct {
	Coordinator protocol.Coordinator
	// AtLeastOnce counts barriers without aligning them.
	AtLeastOnce bool
	// Unaligned takes barriers unaligned, at once or once alignment
	// outlasts AlignedTimeout.
	Unaligned      bool
	AlignedTimeout time.Duration
	// Shared is the checkpoint storage's shared files, for incremental
	// snapshots of a disk backend (nil: none); Incremental asks for them.
	Shared      state.SharedFiles
	Incremental bool
}

// Setup is what an operator opens with: the runtime of its subtask, its
// stable id and name, and the state it restores.
type Setup struct {
	*Runtime
	ID   string
	Name string
	// restore is the operator's state to open from, nil for none
	restore *protocol.OperatorRestore
	index   int
}

// Restored returns every snapshot the operator opens from: one, or for
// keyed state restored at another parallelism each old subtask's whose key
// groups overlap the subtask's.
func (s *Setup) Restored() [][]byte {
	if s.restore == nil {
		return nil
	}
	return s.restore.States
}

// RestoredOne returns the one snapshot the operator opens from, or nil.
func (s *Setup) RestoredOne() []byte {
	if st := s.Restored(); len(st) > 0 {
		return st[0]
	}
	return nil
}

// WithRestored returns s with states to restore instead of its own: a
// composite operator opens its inner one with the inner one's part.
func (s *Setup) WithRestored(states [][]byte) *Setup {
	c := *s
	c.restore = &protocol.OperatorRestore{ID: s.ID, States: states}
	if s.restore != nil {
		c.restore.Watermark = s.restore.Watermark
	}
	return &c
}

// AddShared records the shared files the operator's snapshot for
// checkpoint id names (an incremental snapshot's).
func (s *Setup) AddShared(id int64, names []string) {
	if s.shared == nil || s.shared.id != id {
		return
	}
	s.shared.names[s.index] = append(s.shared.names[s.index], names...)
}

// Runtime is one subtask of a chain: its operators in topological order,
// the writers of its network outputs, and its clock.
type Runtime struct {
	tc          *flow.TaskContext // nil outside a job (a test harness)
	cfg         Config
	subtask     int
	parallelism int
	mem         *memory.Manager
	env         resource.Env
	clock       clock.Clock
	ops         []Operator
	setups      []*Setup         // of each operator, in the order of ops
	metrics     []*metrics.Group // the operators' user metrics, published by the loop
	writers     []Eventer
	net         []netOut       // the network outputs
	owner       WatermarkOwner // the chain head that makes its own watermarks, if any
	// watermark is the last watermark through the whole chain (what its
	// snapshots hold); inWatermark the last one the chain took in, ahead
	// of it while a WatermarkHolder holds one
	watermark   int64
	inWatermark int64
	holders     []bool // per operator: a WatermarkHolder
	idle        bool
	ended       bool // BATCH: the input ended, the maximal watermark may pass
	opened      bool
	ck          *taskCheckpoints // nil without checkpoints
	// align, in an aligned source task: what a WatermarkAlignment does
	align func(m protocol.WatermarkAlignment) error
	// shared gathers the shared files of the snapshot being taken
	shared *sharedNames
	// unaligned checkpoints: the checkpoint in progress
	unal  *unalignedCheckpoint
	async asyncSnapshots // the asynchronous snapshots in progress
	// trigger and resume, in a source task: what a Trigger and a Resume do
	trigger func(t protocol.Trigger) error
	resume  func()
	// logs, in an iteration head: the feedback logged per checkpoint
	logs *feedbackLogs
	// mb is the task's mailbox: the coordinators' messages (the checkpoint
	// coordinator's, an aligned source's announcements) and the operators'
	// mail; mails holds each operator's Mail (nil: none)
	mb    *mailbox
	mails []*Mail
}

type sharedNames struct {
	id    int64
	names [][]string // per operator, in the order of ops
}

// New returns the runtime of subtask tc (nil outside a job: then subtask
// and parallelism are the harness's, and mem may be nil).
func New(tc *flow.TaskContext, cfg Config, subtask, parallelism int, mem *memory.Manager) *Runtime {
	rt := &Runtime{tc: tc, cfg: cfg, subtask: subtask, parallelism: parallelism, mem: mem, clock: cfg.Clock,
		watermark: watermark.Min, inWatermark: watermark.Min, mb: newMailbox()}
	if tc != nil {
		rt.subtask, rt.parallelism, rt.mem, rt.env = tc.Subtask, tc.Parallelism, tc.Env.Memory, tc.Env
		if rt.clock == nil {
			rt.clock = tc.Clock()
		}
	}
	if rt.clock == nil {
		rt.clock = clock.System{}
	}
	if rt.cfg.BatchSize <= 0 {
		rt.cfg.BatchSize = flow.DefaultBatchSize
	}
	return rt
}

// Subtask returns the subtask's index, Parallelism the task's.
func (rt *Runtime) Subtask() int     { return rt.subtask }
func (rt *Runtime) Parallelism() int { return rt.parallelism }

// Memory returns the job's memory manager (nil in a harness: unlimited).
func (rt *Runtime) Memory() *memory.Manager { return rt.mem }

// Env returns the job's resources (memory, spill file system).
func (rt *Runtime) Env() resource.Env { return rt.env }

// Clock returns the processing-time clock.
func (rt *Runtime) Clock() clock.Clock { return rt.clock }

// Now returns the processing time in milliseconds.
func (rt *Runtime) Now() int64 { return rt.clock.Now().UnixMilli() }

// BatchSize returns the number of records per batch.
func (rt *Runtime) BatchSize() int { return rt.cfg.BatchSize }

// Batch says whether the job runs in BATCH mode.
func (rt *Runtime) Batch() bool { return rt.cfg.Batch }

// Config returns the task's configuration.
func (rt *Runtime) Config() *Config { return &rt.cfg }

// Watermark returns the watermark the chain's operators saw last; the
// pointer stays valid, for the contexts of user functions.
func (rt *Runtime) Watermark() *int64 { return &rt.watermark }

// Context returns the job's context (a background one in a harness).
func (rt *Runtime) Context() context.Context {
	if rt.tc == nil {
		return context.Background()
	}
	return rt.tc.Context()
}

// Spilled reports bytes an operator spilled in the task's metrics.
func (rt *Runtime) Spilled(n int64) {
	if rt.tc != nil && n > 0 {
		rt.tc.Metrics.AddSpilled(n)
	}
}

// Counters returns the metrics counters of operator name (nil in a
// harness).
func (rt *Runtime) Counters(name string) *flow.OperatorCounters {
	if rt.tc == nil {
		return nil
	}
	return rt.tc.Metrics.Operator(name)
}

// TaskContext returns the flow task context (nil in a harness).
func (rt *Runtime) TaskContext() *flow.TaskContext { return rt.tc }

// Checkpointing says whether the job checkpoints.
func (rt *Runtime) Checkpointing() bool { return rt.cfg.Checkpoints != nil }

// AddOperator adds an operator of the chain, with its stable id and name.
// The graph layer adds a node's consumers before the node, so the order
// of calls is the reverse of the topological order.
func (rt *Runtime) AddOperator(op Operator, id, name string) *Setup {
	s := &Setup{Runtime: rt, ID: id, Name: name, restore: rt.cfg.Restore.Operator(id)}
	rt.ops = append(rt.ops, op)
	rt.setups = append(rt.setups, s)
	return s
}

// AddMetrics adds the user metric group of an operator of the chain: the
// task's loop publishes it after each step and when the task ends.
func (rt *Runtime) AddMetrics(g *metrics.Group) { rt.metrics = append(rt.metrics, g) }

// PublishMetrics publishes the chain's user metrics (metrics.Group.Publish),
// on the task's goroutine.
func (rt *Runtime) PublishMetrics() {
	for _, g := range rt.metrics {
		g.Publish()
	}
}

// Operators returns the chain's operators: in the order added before
// Open, in topological order after.
func (rt *Runtime) Operators() []Operator { return rt.ops }

// AddEventer adds a receiver of the chain's events besides its network
// outputs.
func (rt *Runtime) AddEventer(e Eventer) { rt.writers = append(rt.writers, e) }

// Open puts the operators in topological order and opens them, each with
// its restored watermark; the task's watermark starts at the least of
// them. Once all are open, each Starter starts.
func (rt *Runtime) Open() error {
	if rt.opened {
		return nil
	}
	rt.opened = true
	slices.Reverse(rt.ops)
	slices.Reverse(rt.setups)
	wm := int64(watermark.Max)
	restored := false
	rt.holders = make([]bool, len(rt.ops))
	for i, s := range rt.setups {
		s.index = i
		if s.restore != nil {
			wm, restored = min(wm, s.restore.Watermark), true
		}
		if h, ok := rt.ops[i].(WatermarkHolder); ok {
			rt.holders[i] = h.HoldsWatermarks()
		}
	}
	if restored && wm != watermark.Max {
		rt.watermark, rt.inWatermark = wm, wm
	}
	for i, op := range rt.ops {
		if err := op.Open(rt.setups[i]); err != nil {
			return err
		}
	}
	for _, op := range rt.ops {
		if s, ok := op.(Starter); ok {
			if err := s.Start(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes every operator, in order, and returns the first error.
func (rt *Runtime) Close() error {
	var err error
	for _, op := range rt.ops {
		if cerr := op.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// Run runs the task: it opens the chain (or, when the restore says the
// task finished, only sends its records in flight again), registers with
// the checkpoint coordinator and runs the loop over in until it ends.
func (rt *Runtime) Run(in Input) (err error) {
	defer func() {
		if c, ok := in.(interface{ close() error }); ok {
			if cerr := c.close(); cerr != nil && err == nil {
				err = cerr
			}
		}
		rt.endAsync(err == nil)
		if cerr := rt.Close(); cerr != nil && err == nil {
			err = cerr
		}
		rt.PublishMetrics()
		if err == nil && rt.ck != nil {
			rt.ck.finished()
		}
	}()
	if r := rt.cfg.Restore; r != nil && r.Finished {
		// a finished operator does not run again (FLIP-147); the records
		// it had in flight go out again
		rt.register()
		return rt.replayChannels()
	}
	if err := rt.Open(); err != nil {
		return err
	}
	rt.register()
	if err := rt.replayChannels(); err != nil {
		return err
	}
	if err := in.start(rt); err != nil {
		return err
	}
	for {
		if err := rt.drainMail(); err != nil {
			return err
		}
		if err := rt.FireProcessingTime(); err != nil {
			return err
		}
		rt.PublishMetrics() // what the last step, the mail and the timers counted
		done, err := in.step(rt)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// Input is what a task's loop reads: the network gate, a source reader or
// an iteration head.
type Input interface {
	// start prepares the input once the chain is open.
	start(rt *Runtime) error
	// step does one unit of work: handles the next item of the input, or
	// waits until one may come, a processing-time timer is due or mail
	// arrives. It reports done once the input ended and the chain
	// finished.
	step(rt *Runtime) (done bool, err error)
}

// Finish ends the input of the chain: every operator's EndInput; in BATCH
// the maximal watermark follows what it emitted (in STREAMING it came
// through already).
func (rt *Runtime) Finish() error {
	if err := rt.EndInput(); err != nil {
		return err
	}
	if !rt.cfg.Batch {
		return nil
	}
	rt.ended = true
	return rt.ForwardWatermark(watermark.Max)
}

// WatermarkOwner is an operator heading its chain that makes its own
// watermarks (Flink's TimestampsAndWatermarksOperator): the watermarks and
// statuses of the chain's input go to it instead of through the chain.
type WatermarkOwner interface {
	// OnInputWatermark is an input watermark; the owner forwards what it
	// decides through ForwardWatermark.
	OnInputWatermark(wm int64) error
}

// SetWatermarkOwner makes o the owner of the chain's event time.
func (rt *Runtime) SetWatermarkOwner(o WatermarkOwner) { rt.owner = o }

// InputWatermark is a watermark of the chain's input: to its owner, if it
// has one, else through the chain.
func (rt *Runtime) InputWatermark(wm int64) error {
	if rt.owner != nil {
		return rt.owner.OnInputWatermark(wm)
	}
	return rt.ForwardWatermark(wm)
}

// InputStatus is a watermark status of the chain's input: dropped when the
// chain's owner makes its own watermarks and statuses, else forwarded.
func (rt *Runtime) InputStatus(idle bool) error {
	if rt.owner != nil {
		return nil
	}
	return rt.ForwardStatus(idle)
}

// ForwardWatermark passes wm through the chain (each operator fires its
// due timers) and then to the outputs; a WatermarkHolder keeps it and
// passes it on later.
func (rt *Runtime) ForwardWatermark(wm int64) error {
	if rt.cfg.Batch && !rt.ended {
		return nil // BATCH: event time stays put until the end of input
	}
	if wm <= rt.inWatermark {
		return nil
	}
	rt.inWatermark = wm
	return rt.passWatermark(0, wm)
}

// passWatermark passes wm through the operators from index from on, and
// to the outputs; it stops at a WatermarkHolder, which took it. The
// chain's watermark moves when wm goes through the whole chain.
func (rt *Runtime) passWatermark(from int, wm int64) error {
	held := slices.Contains(rt.holders[min(from, len(rt.holders)):], true)
	if !held {
		if wm <= rt.watermark {
			return nil
		}
		rt.watermark = wm
		if rt.tc != nil {
			rt.tc.Metrics.SetWatermark(wm)
		}
	}
	for i := from; i < len(rt.ops); i++ {
		if err := rt.ops[i].OnWatermark(wm); err != nil {
			return err
		}
		if i < len(rt.holders) && rt.holders[i] {
			return nil
		}
	}
	if rt.tc != nil {
		rt.tc.Metrics.SetOutputWatermark(wm)
	}
	return rt.event(flow.Event{Kind: flow.Watermark, Value: wm})
}

// ForwardStatus passes a watermark status change to the outputs.
func (rt *Runtime) ForwardStatus(idle bool) error {
	if idle == rt.idle {
		return nil
	}
	rt.idle = idle
	v := flow.StatusActive
	if idle {
		v = flow.StatusIdle
	}
	return rt.event(flow.Event{Kind: flow.WatermarkStatus, Value: v})
}

func (rt *Runtime) event(e flow.Event) error {
	for _, w := range rt.writers {
		if err := w.Event(e); err != nil {
			return err
		}
	}
	return nil
}

// NextProcessingTime is the earliest processing-time timer of the chain.
func (rt *Runtime) NextProcessingTime() (int64, bool) { return rt.nextProcessingTime(0) }

// FireProcessingTime fires the processing-time timers that came due.
func (rt *Runtime) FireProcessingTime() error {
	next, has := rt.NextProcessingTime()
	if !has {
		return nil
	}
	now := rt.clock.Now().UnixMilli()
	if now < next {
		return nil
	}
	for _, op := range rt.ops {
		if err := op.OnProcessingTime(now); err != nil {
			return err
		}
	}
	return nil
}

// EndInput ends the chain's operators in order.
func (rt *Runtime) EndInput() error {
	for _, op := range rt.ops {
		if err := op.EndInput(); err != nil {
			return err
		}
	}
	return nil
}

// timer returns a channel that receives when the chain's next
// processing-time timer (or at, if earlier) is due, and its stop; nil
// when there is none.
func (rt *Runtime) timer(at int64, hasAt bool) (<-chan time.Time, func()) {
	next, has := rt.NextProcessingTime()
	if hasAt && (!has || at < next) {
		next, has = at, true
	}
	if !has {
		return nil, func() {}
	}
	t := rt.clock.Timer(time.UnixMilli(next))
	return t.C(), func() { t.Stop() }
}

// operatorError names the operator of index i in err.
func (rt *Runtime) operatorError(i int, id int64, err error) error {
	return fmt.Errorf("stream: %s: checkpoint %d: %w", rt.setups[i].Name, id, err)
}
