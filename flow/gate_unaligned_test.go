package flow

import (
	"fmt"
	"slices"
	"testing"
)

// prio puts barrier id in front of channel p of input i, as a producer's
// Writer.PriorityEvent does.
func (h *gateHarness) prio(i, p int, id int64) {
	in := h.ins[i]
	in.mu.Lock()
	defer in.mu.Unlock()
	in.putPriority(p, message{ev: Event{Kind: Barrier, Value: id, Source: p}, src: p})
}

// unalignedItems is items with the batches that belong to the channel
// state marked: "IF" an overtaken batch to persist only, "*" a batch read
// before its channel's barrier.
func (h *gateHarness) unalignedItems() []string {
	var out []string
	for {
		it, ok, err := h.g.Poll()
		if err != nil || !ok {
			return out
		}
		s := itemString(h.tc, it)
		switch it.Kind {
		case ItemInFlight:
			s = fmt.Sprintf("IF%d.%d:%s", it.Input, it.Channel, itemString(h.tc, Item{Kind: ItemBatch, Input: it.Input})[3:])
		case ItemBatch:
			if it.InFlight {
				s += "*"
			}
		case ItemUnalignedBarrier:
			s = fmt.Sprintf("U%d", it.Value)
		case ItemChannelStateEnd:
			s = fmt.Sprintf("End%d", it.Value)
		}
		out = append(out, s)
	}
}

// TestGateUnalignedBarrier: a two-input task, the first input of two
// channels. The first priority barrier returns at once; the batches it
// overtook come as ItemInFlight and then again to process; the channels
// whose barrier did not come deliver their batches flagged in flight until
// it comes, a batch after a barrier is not; the channel state ends when
// every channel delivered the barrier (an ended channel no longer counts)
// and the overtaken batches were handed out, before they are processed.
// Worked out by hand from Flink's unaligned barrier handling.
func TestGateUnalignedBarrier(t *testing.T) {
	h := newGateHarness(t, 2, 1)
	h.g.UnalignBarriers()
	h.send(0, 0, batchOf(1))
	h.send(0, 0, batchOf(2))
	h.prio(0, 0, 1) // overtakes 1 and 2
	h.send(0, 0, batchOf(3))
	h.send(0, 1, batchOf(4))
	if got, want := h.unalignedItems(), []string{"U1", "IF0.0:1", "IF0.0:2", "B0:4*", "B0:1", "B0:2", "B0:3"}; !slices.Equal(got, want) {
		t.Fatalf("first barrier: got %v, want %v", got, want)
	}
	h.send(1, 0, batchOf(5))
	h.prio(1, 0, 1) // overtakes 5
	h.send(0, 1, batchOf(6))
	if got, want := h.unalignedItems(), []string{"IF1.0:5", "B0:6*", "B1:5"}; !slices.Equal(got, want) {
		t.Fatalf("second barrier: got %v, want %v", got, want)
	}
	h.send(0, 1, ev(EndOfPartition, 0))
	if got, want := h.unalignedItems(), []string{"End1"}; !slices.Equal(got, want) {
		t.Fatalf("after the last channel ended: got %v, want %v", got, want)
	}
	h.prio(0, 0, 2)
	h.send(1, 0, batchOf(7))
	h.prio(1, 0, 2)
	if got, want := h.unalignedItems(), []string{"U2", "IF1.0:7", "End2", "B1:7"}; !slices.Equal(got, want) {
		t.Fatalf("barrier 2: got %v, want %v", got, want)
	}
}

// TestGateUnalignAfterTimeout: an aligned barrier blocks its channel until
// Unalign switches it: the blocked channel is read again (its batches
// follow the barrier), the other channel's batches come in flight until its
// barrier.
func TestGateUnalignAfterTimeout(t *testing.T) {
	h := newGateHarness(t, 2)
	h.send(0, 0, ev(Barrier, 1))
	h.send(0, 0, batchOf(1))
	h.send(0, 1, batchOf(2))
	if got, want := h.unalignedItems(), []string{"B0:2"}; !slices.Equal(got, want) {
		t.Fatalf("aligning: got %v, want %v", got, want)
	}
	if id, _, ok := h.g.Aligning(); !ok || id != 1 {
		t.Fatalf("Aligning() = %d, %v", id, ok)
	}
	if !h.g.Unalign() {
		t.Fatal("Unalign found no barrier")
	}
	h.send(0, 1, batchOf(3))
	if got, want := h.unalignedItems(), []string{"U1", "B0:1", "B0:3*"}; !slices.Equal(got, want) {
		t.Fatalf("unaligned: got %v, want %v", got, want)
	}
	h.send(0, 1, ev(Barrier, 1))
	if got, want := h.unalignedItems(), []string{"End1"}; !slices.Equal(got, want) {
		t.Fatalf("after the last barrier: got %v, want %v", got, want)
	}
}

// TestGateTrackingEndedChannel: counting barriers (at-least-once), a
// channel that delivered the barrier and then ended no longer counts,
// so the barrier returns only once the other channel delivered it
// (Flink's CheckpointBarrierTracker).
func TestGateTrackingEndedChannel(t *testing.T) {
	h := newGateHarness(t, 3)
	h.g.TrackBarriers()
	h.send(0, 0, ev(Barrier, 1))
	h.send(0, 0, ev(EndOfPartition, 0))
	h.send(0, 1, ev(EndOfPartition, 0))
	if got := h.items(); len(got) != 0 {
		t.Fatalf("channel 2 has not delivered the barrier, got %v", got)
	}
	h.send(0, 2, ev(Barrier, 1))
	if got, want := h.items(), []string{"Barrier1"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
