package stream

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/weirdata/weir/flow"
)

// channelWriter is a network output's side of unaligned checkpoints.
type channelWriter interface {
	// priorityBarrier sends barrier id ahead of everything queued and
	// returns the records it overtook in the writer, encoded, by consumer.
	priorityBarrier(id int64) ([][]byte, error)
	// available reports whether every channel has credit, else returns
	// the channel that receives when one freed a slot.
	available() (bool, <-chan struct{})
	// replay sends encoded records again: to consumer c when direct,
	// else through the partitioner.
	replay(recs []byte, c int, direct bool) error
}

// netOut is a network output of a task and its edge.
type netOut struct {
	w channelWriter
	e *edge
}

// unalignedCheckpoint is a task's unaligned checkpoint in progress: its
// operators' snapshots, taken on the first barrier, and the channel state
// gathered until every channel delivered the barrier.
type unalignedCheckpoint struct {
	id      int64
	start   time.Time
	states  map[*node][]byte
	inputs  map[[2]int][]byte // (input, producer) -> records read before its barrier
	entries []channelEntry    // the records the barrier overtook in the writers
}

func (w writerOut[T]) priorityBarrier(id int64) ([][]byte, error) {
	over, err := w.w.PriorityEvent(flow.Event{Kind: flow.Barrier, Value: id})
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for c, rs := range over {
		if len(rs) == 0 {
			continue
		}
		codec, err := recordCodec[T]()
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = make([][]byte, len(over))
		}
		out[c] = appendRecords(codec, nil, rs)
	}
	return out, nil
}

func (w writerOut[T]) available() (bool, <-chan struct{}) { return w.w.Available() }

func (w writerOut[T]) replay(recs []byte, c int, direct bool) error {
	codec, err := recordCodec[T]()
	if err != nil {
		return err
	}
	rs, err := decodeRecords(codec, recs)
	if err != nil {
		return err
	}
	if direct {
		return w.w.EmitTo(c, rs)
	}
	return w.w.EmitBatch(rs)
}

// edgeKey names network edge e in a checkpoint's channel state: its
// consumer's stable id and the index of the input.
func (env *Env) edgeKey(e *edge) string {
	return env.operatorIDs()[e.to] + "/" + strconv.Itoa(slices.Index(e.to.inputs, e))
}

// edgeKey is Env.edgeKey with the operator ids computed once per task.
func (rt *taskRuntime) edgeKey(e *edge) string {
	if rt.ids == nil {
		rt.ids = rt.p.env.operatorIDs()
	}
	return rt.ids[e.to] + "/" + strconv.Itoa(slices.Index(e.to.inputs, e))
}

// unalignedFromStart says whether the task takes its barriers unaligned from the
// start (Flink's aligned-checkpoint timeout of zero).
func (rt *taskRuntime) unalignedFromStart() bool {
	return rt.ck != nil && rt.ck.c.cfg.Unaligned && rt.ck.c.cfg.AlignedCheckpointTimeout <= 0
}

// outputsBlocked returns, when a network output has no credit, the channel
// that receives once it has; nil when every output is available.
func (rt *taskRuntime) outputsBlocked() <-chan struct{} {
	for _, o := range rt.net {
		if ok, ch := o.w.available(); !ok {
			return ch
		}
	}
	return nil
}

// snapshotOperators writes every operator's snapshot for checkpoint id
// into a buffer of its own, by node.
func (rt *taskRuntime) snapshotOperators(id int64) (map[*node][]byte, error) {
	states := map[*node][]byte{}
	for i, op := range rt.ops {
		n := rt.nodes[len(rt.nodes)-1-i]
		var buf bytesBuffer
		if err := op.snapshot(id, &buf); err != nil {
			return nil, fmt.Errorf("stream: %s: checkpoint %d: %w", n.name, id, err)
		}
		if len(buf) > 0 {
			states[n] = buf
		}
	}
	return states, nil
}

// bytesBuffer is an io.Writer appending to a slice.
type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// startUnaligned takes the task's part of unaligned checkpoint id on its
// first barrier (Flink's SubtaskCheckpointCoordinatorImpl with unaligned
// barriers): the operators snapshot at once, the barrier goes ahead of
// everything queued on every output, and the records it overtook there
// become output channel state. The task acknowledges once its inputs'
// channel state is complete (finishUnaligned).
func (rt *taskRuntime) startUnaligned(id int64) error {
	states, err := rt.snapshotOperators(id)
	if err != nil {
		return err
	}
	u := &unalignedCheckpoint{id: id, start: time.Now(), states: states, inputs: map[[2]int][]byte{}}
	for _, o := range rt.net {
		over, err := o.w.priorityBarrier(id)
		if err != nil {
			return err
		}
		for c, recs := range over {
			if len(recs) > 0 {
				u.entries = append(u.entries, channelEntry{Edge: rt.edgeKey(o.e), Output: true, Producer: rt.subtask,
					Consumer: c, Producers: o.e.from.parallelism, Consumers: o.e.to.parallelism, Records: recs})
			}
		}
	}
	rt.unal = u
	return nil
}

// captureInput adds the batch input i's channel ch delivered before its
// barrier to the channel state of the checkpoint in progress.
func (rt *taskRuntime) captureInput(i, ch int) error {
	if rt.unal == nil {
		return nil
	}
	b, err := rt.captures[i](rt.unal.inputs[[2]int{i, ch}])
	if err != nil {
		return err
	}
	rt.unal.inputs[[2]int{i, ch}] = b
	return nil
}

// finishUnaligned acknowledges unaligned checkpoint id with the operators'
// snapshots and the channel state.
func (rt *taskRuntime) finishUnaligned(id int64) error {
	u := rt.unal
	if u == nil || u.id != id {
		return nil
	}
	rt.unal = nil
	entries := u.entries
	for k, recs := range u.inputs {
		e := rt.tp.inputs[k[0]]
		entries = append(entries, channelEntry{Edge: rt.edgeKey(e), Producer: k[1], Consumer: rt.subtask,
			Producers: e.from.parallelism, Consumers: e.to.parallelism, Records: recs})
	}
	sortEntries(entries)
	rt.ck.c.ack(id, rt.ck.key, u.states, encodeChannelState(entries), time.Since(u.start))
	return nil
}

// sortEntries orders channel state as a restore sends it again: by edge
// and producer, a consumer's input before the producer's output (the
// records the consumer had received came first), then by consumer.
func sortEntries(es []channelEntry) {
	slices.SortStableFunc(es, func(a, b channelEntry) int {
		if c := cmp.Compare(a.Edge, b.Edge); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Producer, b.Producer); c != 0 {
			return c
		}
		if a.Output != b.Output {
			if a.Output {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Consumer, b.Consumer)
	})
}

// replayChannels sends the channel state of the restored checkpoint again
// before anything new (Flink's channel state recovery): each network
// output's entries whose old producer maps to this subtask (producer
// modulo the parallelism), the consumers' input first, through the edge's
// partitioner, so that keyed records reach the subtask that owns their key
// group at any parallelism. Broadcast edges send each entry to its old
// consumer, and their restore at another parallelism is refused
// (buildRestore).
func (rt *taskRuntime) replayChannels() error {
	r := rt.p.env.restore
	if r == nil || len(r.channels) == 0 {
		return nil
	}
	for _, o := range rt.net {
		for _, e := range r.channels[rt.edgeKey(o.e)] {
			if e.Producer%rt.parallelism != rt.subtask {
				continue
			}
			direct := o.e.part.kind == partBroadcast
			if err := o.w.replay(e.Records, e.Consumer, direct); err != nil {
				return fmt.Errorf("stream: %s: restore the records in flight to %s: %w", o.e.from.name, o.e.to.name, err)
			}
		}
	}
	return nil
}
