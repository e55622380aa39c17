package shuffle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// produce sends n frames over pr, an event of a runtime kind every 7th,
// then closes it; it returns what it sent, the oracle of the channel.
func produce(ctx context.Context, pr *Producer, p, n int) ([]string, error) {
	var sent []string
	for seq := range n {
		b := payload(p, seq)
		if seq%7 == 3 {
			kind := EventKind(1 + seq%3)
			if err := pr.SendEvent(ctx, kind, b[:16]); err != nil {
				return sent, err
			}
			sent = append(sent, sentString(Event, kind, b[:16]))
			continue
		}
		if err := pr.Send(ctx, b); err != nil {
			return sent, err
		}
		sent = append(sent, sentString(Data, 0, b))
	}
	if err := pr.Close(ctx); err != nil {
		return sent, err
	}
	return append(sent, sentString(Event, EndOfPartition, nil)), nil
}

// TestOrderCreditAndEnd sends frames over 8 channels to 2 inboxes sharing
// one connection, with a capacity of 2: every channel delivers what was
// sent in order, end of partition last, and no channel ever holds more
// than its credit.
func TestOrderCreditAndEnd(t *testing.T) {
	n := startNode(t, Options{})
	cl := newClient(t, Options{Name: "producer-tm"})
	exchange(testCtx(t), t, n, n.addr, cl, "j")
}

// exchange sends frames from 4 producers to each of 2 consumers of job,
// over cl to the node n at addr, with a capacity of 2, and checks that
// every channel delivered what was sent in order, end of partition last,
// and that no channel held more than its credit.
func exchange(ctx context.Context, t *testing.T, n *node, addr string, cl *Client, job string) {
	t.Helper()
	const producers, consumers, frames, capacity = 4, 2, 300, 2

	inboxes := make([]*Inbox, consumers)
	for c := range inboxes {
		in, err := n.srv.Inbox(InboxID{Job: job, Attempt: 1, Edge: 3, Consumer: uint32(c)}, producers, capacity)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		inboxes[c] = in
	}
	want := make([][][]string, consumers)
	got := make([]received, consumers)
	var wg sync.WaitGroup
	errs := make(chan error, producers*consumers+consumers)
	prods := make([]*Producer, 0, producers*consumers)
	for c := range consumers {
		want[c] = make([][]string, producers)
		for p := range producers {
			pr, err := cl.Open(ctx, addr, ChannelID{Job: job, Attempt: 1, Edge: 3, Producer: uint32(p), Consumer: uint32(c)})
			if err != nil {
				t.Fatal(err)
			}
			prods = append(prods, pr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				sent, err := produce(ctx, pr, p*10+c, frames)
				want[c][p] = sent
				if err != nil {
					errs <- err
				}
			}()
		}
	}
	for c, in := range inboxes {
		got[c] = received{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := drain(ctx, t, in, func(f Frame) {
				got[c][f.Producer] = append(got[c][f.Producer], frameString(f))
				granted, recv := in.credits(f.Producer)
				in.mu.Lock()
				queued := in.chans[f.Producer].n
				in.mu.Unlock()
				if recv > granted || queued > capacity {
					errs <- fmt.Errorf("channel %d->%d: %d frames received with %d credits granted, %d queued", f.Producer, c, recv, granted, queued)
				}
			})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for c := range consumers {
		for p := range producers {
			if !slices.Equal(got[c][p], want[c][p]) {
				t.Fatalf("channel %d->%d: got %d frames, want %d; first difference at %d", p, c, len(got[c][p]), len(want[c][p]), firstDiff(got[c][p], want[c][p]))
			}
		}
	}
	for _, pr := range prods {
		granted, sent := pr.credits()
		if sent > granted || sent != frames+1 {
			t.Fatalf("channel %s: sent %d frames with %d credits granted, want %d sent", pr.ID(), sent, granted, frames+1)
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSendBeyondCreditBreaks makes a producer send more than it was
// granted: the consumer refuses the frame and breaks the connection.
func TestSendBeyondCreditBreaks(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	cl := newClient(t, Options{Name: "rogue"})
	in, err := n.srv.Inbox(InboxID{Job: "j", Edge: 1}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pr, err := cl.Open(ctx, n.addr, ChannelID{Job: "j", Edge: 1})
	if err != nil {
		t.Fatal(err)
	}
	// the two granted frames; nothing polls yet, so no more credit comes
	for range 2 {
		if err := pr.Send(ctx, []byte("granted")); err != nil {
			t.Fatal(err)
		}
	}
	pr.c.mu.Lock()
	pr.credit += 5
	pr.c.mu.Unlock()
	for range 5 {
		if err := pr.Send(ctx, []byte("beyond")); err != nil {
			break
		}
	}
	err = drain(ctx, t, in, func(Frame) {})
	if !errors.Is(err, ErrBroken) {
		t.Fatalf("Poll returned %v, want ErrBroken", err)
	}
	t.Log(err)
}

// TestOpenBeforeInbox opens channels before their inbox is registered,
// one of them from a producer the inbox does not have: the good channel
// flows once the inbox comes, the bad one breaks its connection.
func TestOpenBeforeInbox(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	good := newClient(t, Options{Name: "good"})
	bad := newClient(t, Options{Name: "bad"})
	id := InboxID{Job: "early", Edge: 1}
	pr, err := good.Open(ctx, n.addr, ChannelID{Job: "early", Edge: 1, Producer: 0})
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := bad.Open(ctx, n.addr, ChannelID{Job: "early", Edge: 1, Producer: 5})
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		_, err := sendN(ctx, pr, 0, 0, 10)
		if err == nil {
			err = pr.Close(ctx)
		}
		sent <- err
	}()
	in, err := n.srv.Inbox(id, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	frames := 0
	if err := drain(ctx, t, in, func(Frame) { frames++ }); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil || frames != 11 {
		t.Fatalf("good channel: %d frames, %v", frames, err)
	}
	if err := wrong.Send(ctx, []byte("x")); !errors.Is(err, ErrBroken) {
		t.Fatalf("channel of a producer the inbox lacks: %v, want ErrBroken", err)
	}
	if _, err := n.srv.Inbox(id, 1, 2); err == nil {
		t.Fatal("an inbox registered twice")
	}
}

// TestClientCloseDelivers closes the producer's Client right after its
// last frame: Close half-closes the stream and waits, so the consumer,
// reading only after, still gets every frame and the end of partition.
func TestClientCloseDelivers(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, Options{})
	cl := NewClient(Options{})
	const frames = 50
	in, err := n.srv.Inbox(InboxID{Job: "close"}, 1, frames+1)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pr, err := cl.Open(ctx, n.addr, ChannelID{Job: "close"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := sendN(ctx, pr, 0, 0, frames)
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want = append(want, sentString(Event, EndOfPartition, nil))
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := drain(ctx, t, in, func(f Frame) { got = append(got, frameString(f)) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %d frames, want %d", len(got), len(want))
	}
	if _, err := cl.Open(ctx, n.addr, ChannelID{Job: "close", Producer: 1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Open after Close: %v, want ErrClosed", err)
	}
}
