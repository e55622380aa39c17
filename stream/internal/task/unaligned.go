package task

import (
	"fmt"
	"time"

	"github.com/weirdata/weir/stream/internal/protocol"
)

// unalignedCheckpoint is a task's unaligned checkpoint in progress: its
// operators' snapshots, taken on the first barrier, and the channel state
// gathered until every channel delivered the barrier.
type unalignedCheckpoint struct {
	id      int64
	start   time.Time
	wm      int64
	snaps   *snapshots
	inputs  map[[2]int][]byte       // (input, producer) -> records read before its barrier
	entries []protocol.ChannelEntry // the records the barrier overtook in the writers
}

// unalignedFromStart says whether the task takes its barriers unaligned
// from the start (Flink's aligned-checkpoint timeout of zero).
func (rt *Runtime) unalignedFromStart() bool {
	return rt.ck != nil && rt.ck.cfg.Unaligned && rt.ck.cfg.AlignedTimeout <= 0
}

// startUnaligned takes the task's part of unaligned checkpoint id on its
// first barrier (Flink's SubtaskCheckpointCoordinatorImpl with unaligned
// barriers): the operators snapshot at once, the barrier goes ahead of
// everything queued on every output, and the records it overtook there
// become output channel state. The task acknowledges once its inputs'
// channel state is complete (finishUnaligned).
func (rt *Runtime) startUnaligned(id, meta int64) error {
	rt.ck.begin(id, meta)
	snaps, err := rt.snapshotOperators(id)
	if err != nil {
		return err
	}
	u := &unalignedCheckpoint{id: id, start: time.Now(), wm: rt.watermark, snaps: snaps, inputs: map[[2]int][]byte{}}
	for _, o := range rt.net {
		over, err := o.w.priorityBarrier(id, meta)
		if err != nil {
			return err
		}
		for c, recs := range over {
			if len(recs) > 0 {
				u.entries = append(u.entries, protocol.ChannelEntry{Edge: o.e.Key, Output: true, Producer: rt.subtask,
					Consumer: c, Producers: o.e.Producers, Consumers: o.e.Consumers, Records: recs})
			}
		}
	}
	rt.unal = u
	return nil
}

// captureInput adds the batch input i's channel ch delivered before its
// barrier to the channel state of the checkpoint in progress.
func (rt *Runtime) captureInput(ins []NetworkInput, i, ch int) error {
	if rt.unal == nil {
		return nil
	}
	b, err := ins[i].capture(rt.unal.inputs[[2]int{i, ch}])
	if err != nil {
		return err
	}
	rt.unal.inputs[[2]int{i, ch}] = b
	return nil
}

// finishUnaligned acknowledges unaligned checkpoint id with the operators'
// snapshots and the channel state.
func (rt *Runtime) finishUnaligned(ins []NetworkInput, id int64) error {
	u := rt.unal
	if u == nil || u.id != id {
		return nil
	}
	rt.unal = nil
	entries := u.entries
	for k, recs := range u.inputs {
		e := ins[k[0]].edge
		entries = append(entries, protocol.ChannelEntry{Edge: e.Key, Producer: k[1], Consumer: rt.subtask,
			Producers: e.Producers, Consumers: e.Consumers, Records: recs})
	}
	protocol.SortChannels(entries)
	if rt.logs != nil { // an iteration head acknowledges once its barrier came back
		rt.logs.start(id, u.snaps, u.wm, protocol.EncodeChannels(entries), time.Since(u.start))
		return nil
	}
	rt.ack(id, u.snaps, u.wm, protocol.EncodeChannels(entries), time.Since(u.start))
	return nil
}

// replayChannels sends the channel state of the restored checkpoint again
// before anything new (Flink's channel state recovery): each network
// output's entries whose old producer maps to this subtask (producer
// modulo the parallelism), the consumers' input first, through the edge's
// partitioner, so that keyed records reach the subtask that owns their key
// group at any parallelism. Broadcast edges send each entry to its old
// consumer (a restore at another parallelism is refused before).
func (rt *Runtime) replayChannels() error {
	r := rt.cfg.Restore
	if r == nil || len(r.Channels) == 0 {
		return nil
	}
	for _, o := range rt.net {
		for _, e := range r.Channels {
			if e.Edge != o.e.Key || e.Producer%rt.parallelism != rt.subtask {
				continue
			}
			if err := o.w.replay(e.Records, e.Consumer, o.e.Broadcast); err != nil {
				return fmt.Errorf("stream: %s: restore the records in flight to %s: %w", o.e.From, o.e.To, err)
			}
		}
	}
	return nil
}
