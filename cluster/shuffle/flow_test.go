package shuffle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// sendN sends frames first..first+n-1 of producer p and returns the
// strings the consumer should see.
func sendN(ctx context.Context, pr *Producer, p, first, n int) ([]string, error) {
	var sent []string
	for seq := first; seq < first+n; seq++ {
		b := payload(p, seq)
		if err := pr.Send(ctx, b); err != nil {
			return sent, fmt.Errorf("frame %d: %w", seq, err)
		}
		sent = append(sent, sentString(Data, 0, b))
	}
	return sent, nil
}

// blockedSend starts a Send of frame seq of producer p that is expected to
// wait for credit; it returns the channel its error arrives on.
func blockedSend(ctx context.Context, pr *Producer, p, seq int) (context.CancelFunc, <-chan error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- pr.Send(ctx, payload(p, seq)) }()
	return cancel, done
}

// TestBackpressureIsolated fills one channel whose consumer never reads:
// its producer's next Send waits for credit, while another channel on the
// same connection carries many times its capacity; the waiting Send ends
// only when its context does.
func TestBackpressureIsolated(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	cl := newClient(t, Options{})
	const capacity, frames = 3, 200
	stuck, err := n.srv.Inbox(InboxID{Job: "j", Edge: 1, Consumer: 0}, 1, capacity)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	flowing, err := n.srv.Inbox(InboxID{Job: "j", Edge: 1, Consumer: 1}, 1, capacity)
	if err != nil {
		t.Fatal(err)
	}
	defer flowing.Close()
	a, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 1, Consumer: 0})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 1, Consumer: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.c != b.c {
		t.Fatal("the two channels do not share a connection")
	}
	if _, err := sendN(ctx, a, 0, 0, capacity); err != nil {
		t.Fatal(err)
	}
	cancel, aDone := blockedSend(ctx, a, 0, capacity)
	defer cancel()

	var want, got []string
	bDone := make(chan error, 1)
	go func() {
		sent, err := sendN(ctx, b, 1, 0, frames)
		want = sent
		if err == nil {
			err = b.Close(ctx)
		}
		bDone <- err
	}()
	if err := drain(ctx, t, flowing, func(f Frame) {
		if f.Type == Data {
			got = append(got, frameString(f))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the flowing channel delivered %d frames, want %d", len(got), len(want))
	}
	select {
	case err := <-aDone:
		t.Fatalf("the channel out of credit sent while its consumer read nothing: %v", err)
	default:
	}
	cancel()
	if err := <-aDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting Send returned %v, want context.Canceled", err)
	}
	if g, r := stuck.credits(0); r != capacity || g != capacity {
		t.Fatalf("the stuck channel received %d frames with %d credits, want %d and %d", r, g, capacity, capacity)
	}
}

// TestBlockedChannelStopsOnlyItsProducer blocks channel 0 of an inbox (a
// barrier being aligned): its producer stops once its queue is full, while
// channel 1 of the same inbox and connection is read to its end; unblocked,
// channel 0 delivers everything in order.
func TestBlockedChannelStopsOnlyItsProducer(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	cl := newClient(t, Options{})
	const capacity, frames = 4, 100
	in, err := n.srv.Inbox(InboxID{Job: "j", Edge: 2}, 2, capacity)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	in.Block(0)
	p0, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 2, Producer: 0})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 2, Producer: 1})
	if err != nil {
		t.Fatal(err)
	}
	want0, err := sendN(ctx, p0, 0, 0, capacity)
	if err != nil {
		t.Fatal(err)
	}
	cancel, p0Done := blockedSend(ctx, p0, 0, capacity)
	defer cancel()

	p1Done := make(chan error, 1)
	var want1 []string
	go func() {
		sent, err := sendN(ctx, p1, 1, 0, frames)
		want1 = sent
		if err == nil {
			err = p1.Close(ctx)
		}
		p1Done <- err
	}()
	var got1 []string
	for len(got1) < frames+1 {
		f, ok, err := in.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			select {
			case <-in.Ready():
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
			continue
		}
		if f.Producer != 1 {
			t.Fatalf("Poll returned a frame of blocked channel %d", f.Producer)
		}
		got1 = append(got1, frameString(f))
		f.Release()
	}
	if err := <-p1Done; err != nil {
		t.Fatal(err)
	}
	if want1 = append(want1, sentString(Event, EndOfPartition, nil)); !slices.Equal(got1, want1) {
		t.Fatalf("channel 1 delivered %d frames, want %d", len(got1), len(want1))
	}
	select {
	case err := <-p0Done:
		t.Fatalf("the blocked channel's producer sent beyond its queue: %v", err)
	default:
	}
	in.Unblock(0)
	// the waiting Send and the end of partition go once Poll frees credit
	closed := make(chan error, 1)
	go func() {
		err := <-p0Done
		if err == nil {
			err = p0.Close(ctx)
		}
		closed <- err
	}()
	want0 = append(want0, sentString(Data, 0, payload(0, capacity)), sentString(Event, EndOfPartition, nil))
	var got0 []string
	if err := drain(ctx, t, in, func(f Frame) { got0 = append(got0, frameString(f)) }); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got0, want0) {
		t.Fatalf("channel 0 delivered %d frames after Unblock, want %d", len(got0), len(want0))
	}
}

// TestPriorityOvertakes queues data on a channel nobody reads, then sends
// two priority frames: Poll hands them out first, in the order sent, each
// counting the data frames it overtook, then the data in order.
func TestPriorityOvertakes(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	cl := newClient(t, Options{})
	const capacity = 5
	in, err := n.srv.Inbox(InboxID{Job: "j", Edge: 4}, 1, capacity)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pr, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 4})
	if err != nil {
		t.Fatal(err)
	}
	data, err := sendN(ctx, pr, 0, 0, capacity)
	if err != nil {
		t.Fatal(err)
	}
	// out of credit: priority frames still go
	if pr.Credit() != 0 {
		t.Fatalf("credit %d after sending the capacity", pr.Credit())
	}
	barriers := [][]byte{[]byte("barrier-7"), []byte("barrier-8")}
	for _, b := range barriers {
		if err := pr.SendPriority(9, b); err != nil {
			t.Fatal(err)
		}
	}
	// frames of a stream arrive in order: with both priority frames here,
	// the data sent before is here too
	waitFor(ctx, t, in, func() bool { return len(in.chans[0].prio) == len(barriers) })
	var want []string
	for _, b := range barriers {
		want = append(want, fmt.Sprintf("%s over %d", sentString(Priority, 9, b), capacity))
	}
	for _, d := range data {
		want = append(want, d+" over 0")
	}
	closed := make(chan error, 1)
	go func() { closed <- pr.Close(ctx) }()
	want = append(want, sentString(Event, EndOfPartition, nil)+" over 0")
	var got []string
	if err := drain(ctx, t, in, func(f Frame) { got = append(got, fmt.Sprintf("%s over %d", frameString(f), f.Overtook)) }); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%.60q\nwant\n%.60q", got, want)
	}
}

// TestPollPriorityReadsBlocked reads a priority frame from a blocked
// channel with PollPriority, which Poll does not hand out.
func TestPollPriorityReadsBlocked(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	cl := newClient(t, Options{})
	in, err := n.srv.Inbox(InboxID{Job: "j", Edge: 5}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	in.Block(0)
	pr, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.SendPriority(2, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, in, func() bool { return len(in.chans[0].prio) == 1 })
	if _, ok, err := in.Poll(); ok || err != nil {
		t.Fatalf("Poll of a blocked channel: ok %v, err %v", ok, err)
	}
	f, ok := in.PollPriority()
	if !ok || string(f.Bytes) != "b1" || f.Type != Priority || f.Kind != 2 {
		t.Fatalf("PollPriority: %v %q", ok, f.Bytes)
	}
	f.Release()
}

// TestCloseInboxDropsFrames closes an inbox while its producer waits for
// credit: the producer is released, and its sends are dropped.
func TestCloseInboxDropsFrames(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	cl := newClient(t, Options{})
	in, err := n.srv.Inbox(InboxID{Job: "j", Edge: 6}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 6})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sendN(ctx, pr, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	cancel, done := blockedSend(ctx, pr, 0, 1)
	defer cancel()
	in.Close()
	if err := <-done; err != nil {
		t.Fatalf("Send after the consumer ended: %v, want nil (dropped)", err)
	}
	if _, err := sendN(ctx, pr, 0, 2, 10); err != nil {
		t.Fatal(err)
	}
	if err := pr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// the id can be registered again, for the next consumer
	in2, err := n.srv.Inbox(InboxID{Job: "j", Edge: 6}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	in2.Close()
}
