package runner

import (
	"fmt"
	"sync"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"github.com/weirdata/weir/stream/internal/graph"
	"github.com/weirdata/weir/stream/internal/protocol"
	"github.com/weirdata/weir/stream/source"
)

// spreadRun is one part of a spread job: its link to the others and what
// came over it. Part 0 serves the coordinator and the enumerators to the
// other parts (a remote task is a remoteTask; a split request is answered
// by the enumerator's valve); another part is the coordinator of its own
// tasks (protocol.Coordinator) and the enumerators of its sources
// (remoteSplits), forwarding both to part 0.
type spreadRun struct {
	s *Spread
	j *Job
	l *flow.Link

	mu      sync.Mutex
	failure error // the first: a part failed, the link broke

	// ready is closed once the attempt's coordinator, enumerators and
	// alignments are known (or the part ends): a message that comes
	// before waits for it
	ready     chan struct{}
	readyOnce sync.Once

	attempt int // the attempt's number, in its tasks' ids

	// part 0
	coord    *coordinator.Coordinator
	enums    map[string]source.Enumerator
	aligners map[string]*coordinator.SourceAlignment
	ended    map[int]*msg
	others   chan struct{} // closed once every other part ended, or at a failure
	closed   bool
	told     bool // Done was sent

	// the other parts
	tasks  map[protocol.TaskID]protocol.Task
	seq    uint64
	grants map[uint64]chan *msg
	done   chan struct{} // closed once part 0's Done came, or at a failure
	result *msg
}

var _ protocol.Coordinator = (*spreadRun)(nil)

func newSpreadRun(j *Job, s *Spread) *spreadRun {
	sr := &spreadRun{s: s, j: j, ended: map[int]*msg{}, others: make(chan struct{}), tasks: map[protocol.TaskID]protocol.Task{},
		grants: map[uint64]chan *msg{}, done: make(chan struct{}), ready: make(chan struct{})}
	if len(s.Slots) == 1 {
		sr.closeLocked()
	}
	return sr
}

// fail records the first failure and ends the part's attempt.
func (sr *spreadRun) fail(err error) {
	sr.mu.Lock()
	if sr.failure == nil {
		sr.failure = err
	}
	sr.closeLocked()
	sr.mu.Unlock()
	if fj := sr.j.Current(); fj != nil {
		fj.Cancel()
	}
}

// failed returns the first failure, or nil.
func (sr *spreadRun) failed() error {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return sr.failure
}

// closeLocked closes others and done once; sr.mu is held.
func (sr *spreadRun) closeLocked() {
	if !sr.closed {
		sr.closed = true
		close(sr.others)
		close(sr.done)
	}
}

// setReady lets handle go on.
func (sr *spreadRun) setReady() { sr.readyOnce.Do(func() { close(sr.ready) }) }

// handle takes one message from part from, once the attempt is ready.
func (sr *spreadRun) handle(from int, m *msg) error {
	<-sr.ready
	if sr.s.Part == 0 {
		return sr.handleHub(from, m)
	}
	return sr.handleMember(m)
}

func (sr *spreadRun) handleHub(from int, m *msg) error {
	switch m.Kind {
	case wireRegister:
		if sr.coord != nil {
			sr.coord.Register(m.Task, remoteTask{sr: sr, part: from, id: m.Task})
		}
	case wireAlignRegister:
		if sa := sr.aligners[m.Task.Vertex]; sa != nil {
			sa.Register(m.Task.Subtask, remoteTask{sr: sr, part: from, id: m.Task})
		}
	case wireCoord:
		pm, err := protocol.Decode(m.Inner)
		if err != nil {
			return err
		}
		if rw, ok := pm.(protocol.ReportedWatermark); ok {
			if sa := sr.aligners[rw.Task.Vertex]; sa != nil {
				sa.Report(rw)
			}
			return nil
		}
		if sr.coord == nil {
			return nil
		}
		switch pm := pm.(type) {
		case protocol.Ack:
			sr.coord.Acknowledge(pm)
		case protocol.Decline:
			sr.coord.Decline(pm)
		case protocol.Notified:
			sr.coord.Notified(pm)
		case protocol.Finished:
			sr.coord.Finish(pm)
		case protocol.InputsEnded:
			sr.coord.InputsEnded(pm)
		default:
			return fmt.Errorf("%w: %T to the coordinator", errWire, pm)
		}
	case wireSplitRequest:
		g := &msg{Kind: wireSplitGrant, Seq: m.Seq}
		if e := sr.enums[m.Source]; e == nil {
			g.Err = fmt.Sprintf("stream: part 0 has no enumerator of source %s", m.Source)
		} else if gr, err := e.Request(m.Subtask); err != nil {
			g.Err = err.Error()
		} else {
			g.Grant = gr
		}
		sr.l.Send(from, g.encode())
	case wireEnded:
		var err error
		switch {
		case m.Err != "":
			err = fmt.Errorf("stream: part %d of the spread job failed: %s", from, m.Err)
		case m.Status != flow.Finished:
			err = fmt.Errorf("stream: part %d of the spread job ended %v", from, m.Status)
		}
		sr.mu.Lock()
		sr.ended[from] = m
		if len(sr.ended) == len(sr.s.Slots)-1 {
			sr.closeLocked()
		}
		told := sr.told // the part ended as part 0 asked
		sr.mu.Unlock()
		if err != nil && !told {
			sr.fail(err)
		}
	default:
		return fmt.Errorf("%w: kind %d to part 0", errWire, m.Kind)
	}
	return nil
}

func (sr *spreadRun) handleMember(m *msg) error {
	switch m.Kind {
	case wireDeliver:
		pm, err := protocol.Decode(m.Inner)
		if err != nil {
			return err
		}
		sr.mu.Lock()
		t := sr.tasks[m.Task]
		sr.mu.Unlock()
		if t != nil {
			t.Deliver(pm)
		}
	case wireSplitGrant:
		sr.mu.Lock()
		ch := sr.grants[m.Seq]
		delete(sr.grants, m.Seq)
		sr.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case wireStop:
		sr.j.mu.Lock()
		sr.j.stopped = true
		fj := sr.j.cur
		sr.j.mu.Unlock()
		if fj != nil {
			fj.Cancel()
		}
	case wireDone:
		sr.mu.Lock()
		sr.result = m
		sr.closeLocked()
		sr.mu.Unlock()
		if fj := sr.j.Current(); fj != nil && m.Status != flow.Finished {
			fj.Cancel() // the job ended elsewhere
		}
	default:
		return fmt.Errorf("%w: kind %d from part 0", errWire, m.Kind)
	}
	return nil
}

// Register, Acknowledge, Decline, Notified and Finish forward a task's
// messages to the coordinator in part 0 (another part).
func (sr *spreadRun) Register(id protocol.TaskID, t protocol.Task) {
	sr.mu.Lock()
	sr.tasks[id] = t
	sr.mu.Unlock()
	sr.l.Send(0, (&msg{Kind: wireRegister, Task: id}).encode())
}

func (sr *spreadRun) Acknowledge(a protocol.Ack) { sr.forward(a) }
func (sr *spreadRun) Decline(d protocol.Decline) { sr.forward(d) }
func (sr *spreadRun) Notified(n protocol.Notified) {
	sr.forward(n)
}
func (sr *spreadRun) Finish(f protocol.Finished) { sr.forward(f) }
func (sr *spreadRun) InputsEnded(e protocol.InputsEnded) {
	sr.forward(e)
}

func (sr *spreadRun) forward(m protocol.Message) {
	sr.l.Send(0, (&msg{Kind: wireCoord, Inner: protocol.Encode(m)}).encode())
}

// remoteTask is a task of another part, as part 0's coordinator sees it.
type remoteTask struct {
	sr   *spreadRun
	part int
	id   protocol.TaskID
}

func (t remoteTask) Deliver(m protocol.Message) {
	t.sr.l.Send(t.part, (&msg{Kind: wireDeliver, Task: t.id, Inner: protocol.Encode(m)}).encode())
}

// remoteAligner is the watermark alignment of an aligned source as
// another part sees it: its subtasks register and report to part 0's,
// whose announcements come back as the coordinator's messages do.
type remoteAligner struct {
	sr       *spreadRun
	id       string
	interval time.Duration
}

func (a remoteAligner) Interval() time.Duration { return a.interval }

func (a remoteAligner) Register(subtask int, t protocol.Task) {
	sr := a.sr
	id := protocol.TaskID{Job: sr.j.id, Attempt: sr.attempt, Vertex: a.id, Subtask: subtask}
	sr.mu.Lock()
	sr.tasks[id] = t
	sr.mu.Unlock()
	sr.l.Send(0, (&msg{Kind: wireAlignRegister, Task: id}).encode())
}

func (a remoteAligner) Report(r protocol.ReportedWatermark) { a.sr.forward(r) }

// remoteSplits is the enumerator of a source as another part sees it: a
// request goes to part 0 and waits for its answer.
type remoteSplits struct {
	sr *spreadRun
	id string
}

func (r remoteSplits) Request(subtask int) (source.Grant, error) {
	sr := r.sr
	ch := make(chan *msg, 1)
	sr.mu.Lock()
	sr.seq++
	seq := sr.seq
	sr.grants[seq] = ch
	sr.mu.Unlock()
	sr.l.Send(0, (&msg{Kind: wireSplitRequest, Seq: seq, Source: r.id, Subtask: subtask}).encode())
	select {
	case m := <-ch:
		if m.Err != "" {
			return source.Grant{}, fmt.Errorf("stream: split request to part 0: %s", m.Err)
		}
		return m.Grant, nil
	case <-sr.done:
		sr.mu.Lock()
		delete(sr.grants, seq)
		err := sr.failure
		sr.mu.Unlock()
		if err == nil {
			err = errPartEnded
		}
		return source.Grant{}, fmt.Errorf("stream: split request to part 0: %w", err)
	}
}

// AddSplitsBack and Snapshot belong to the enumerator in part 0, which
// holds the splits; a reader of another part never calls them.
func (r remoteSplits) AddSplitsBack([]source.Split) {}
func (r remoteSplits) Snapshot() source.EnumeratorState {
	return source.EnumeratorState{}
}

// finals returns this part's final sink states (graph.Node.Finalize) by
// stable operator id, and their commits.
func finals(p *graph.Program) ([]final, error) {
	ids := graph.OperatorIDs(p)
	var out []final
	for _, n := range p.Nodes {
		if n.Finalize == nil {
			continue
		}
		b, _, err := n.Finalize()
		if err != nil {
			return nil, fmt.Errorf("stream: %s: %w", n.Name, err)
		}
		if b != nil {
			out = append(out, final{ID: ids[n], State: b})
		}
	}
	return out, nil
}

// remoteFinals returns the final sink states the other parts reported
// for operator id.
func (sr *spreadRun) remoteFinals(id string) [][]byte {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	var out [][]byte
	for p := 1; p < len(sr.s.Slots); p++ {
		if m := sr.ended[p]; m != nil {
			for _, f := range m.Finals {
				if f.ID == id {
					out = append(out, f.State)
				}
			}
		}
	}
	return out
}

// finish ends the part: part 0 tells the others how the job ended (once),
// then each closes its link.
func (sr *spreadRun) finish(status flow.Status, err error) {
	sr.tell(status, err)
	sr.setReady()
	sr.l.Close()
}

// tell sends the other parts the job's end, once (part 0): a part still
// running cancels its tasks and ends so.
func (sr *spreadRun) tell(status flow.Status, err error) {
	if sr.s.Part != 0 {
		return
	}
	sr.mu.Lock()
	told := sr.told
	sr.told = true
	sr.mu.Unlock()
	if told {
		return
	}
	m := &msg{Kind: wireDone, Status: status}
	if err != nil {
		m.Err = err.Error()
	}
	for p := 1; p < len(sr.s.Slots); p++ {
		sr.l.Send(p, m.encode())
	}
}

// superviseMember waits for the flow job of a part other than 0, reports
// its end to part 0 with its final sink states, and ends as part 0 says
// the job did.
func (j *Job) superviseMember() {
	sr := j.sr
	j.mu.Lock()
	fj := j.cur
	j.mu.Unlock()
	res, err := fj.Wait()
	status := fj.Status()
	j.mu.Lock()
	stopped := j.stopped
	j.mu.Unlock()
	if stopped && status == flow.Canceled {
		status, err = flow.Finished, nil
	}
	if serr := sr.failed(); serr != nil {
		err = serr
	}
	m := &msg{Kind: wireEnded, Status: status}
	if err == nil && status == flow.Finished && j.cfg.Checkpoints != nil && !stopped {
		m.Finals, err = finals(j.cfg.Program)
	}
	if err != nil {
		m.Err, m.Finals = err.Error(), nil
		if m.Status == flow.Finished {
			m.Status = flow.Failed
		}
	}
	sr.l.Send(0, m.encode())
	<-sr.done
	sr.mu.Lock()
	result, failure := sr.result, sr.failure
	sr.mu.Unlock()
	j.mu.Lock()
	stopped = j.stopped // a stop's cancel may have failed a task first
	j.mu.Unlock()
	switch {
	case stopped && failure == nil && result.Status == flow.Finished:
		j.finish(res, nil, flow.Finished) // what the stop canceled does not matter
	case failure == nil && result.Status != flow.Finished:
		// the job ended elsewhere: this part's tasks were canceled for it
		j.finish(res, fmt.Errorf("stream: part 0 of the spread job ended %v: %s", result.Status, result.Err), result.Status)
	case err != nil:
		j.finish(res, err, flow.Failed)
	case failure != nil:
		j.finish(res, failure, flow.Failed)
	default:
		j.finish(res, nil, result.Status)
	}
}
