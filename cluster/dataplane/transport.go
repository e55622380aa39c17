package dataplane

import (
	"context"
	"fmt"
	"io"

	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/flow"
)

// Transport is a flow.Transport over a process's shuffle Client and
// Server for one attempt of one job.
type Transport struct {
	Job     string
	Attempt uint32
	Client  *shuffle.Client
	Server  *shuffle.Server
	// Addr returns the shuffle address of the process that runs subtask
	// i of vertex v.
	Addr func(v, i int) string
}

var _ flow.Transport = (*Transport)(nil)

// Open opens the producer end of ch at the consumer's process.
func (t *Transport) Open(ctx context.Context, ch flow.Channel) (flow.Sender, error) {
	p, err := t.Client.Open(ctx, t.Addr(ch.To, ch.Consumer), shuffle.ChannelID{
		Job: t.Job, Attempt: t.Attempt, Edge: uint32(ch.Edge), Producer: uint32(ch.Producer), Consumer: uint32(ch.Consumer),
	})
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	return sender{p}, nil
}

// Inbox registers consumer's end of edge on the Server.
func (t *Transport) Inbox(edge, consumer, producers, capacity int) (flow.Receiver, error) {
	in, err := t.Server.Inbox(shuffle.InboxID{Job: t.Job, Attempt: t.Attempt, Edge: uint32(edge), Consumer: uint32(consumer)}, producers, capacity)
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	return receiver{in}, nil
}

type sender struct{ p *shuffle.Producer }

func (s sender) Send(ctx context.Context, b []byte) error { return s.p.Send(ctx, b) }

func (s sender) SendEvent(ctx context.Context, kind flow.EventKind, b []byte) error {
	if kind == flow.EndOfPartition || kind == 0 {
		return fmt.Errorf("dataplane: channel %s: cannot send a %v event", s.p.ID(), kind)
	}
	return s.p.SendEvent(ctx, shuffle.EventKind(kind), b)
}

func (s sender) Close(ctx context.Context) error { return s.p.Close(ctx) }

type receiver struct{ in *shuffle.Inbox }

// Poll hands f the next frame, mapping shuffle's end of partition to
// flow's and every other event kind to flow's of the same number.
func (r receiver) Poll(f func(producer int, kind flow.EventKind, b []byte) error) (bool, error) {
	fr, ok, err := r.in.Poll()
	if err == io.EOF {
		return false, nil
	}
	if err != nil || !ok {
		return false, err
	}
	defer fr.Release()
	var kind flow.EventKind
	switch fr.Type {
	case shuffle.Data:
	case shuffle.Event:
		kind = flow.EventKind(fr.Kind)
		if fr.Kind == shuffle.EndOfPartition {
			kind = flow.EndOfPartition
		}
	default:
		return false, fmt.Errorf("dataplane: inbox %s: priority frame from producer %d: flow sends its priority events (unaligned barriers) as event frames", r.in.ID(), fr.Producer)
	}
	return true, f(fr.Producer, kind, fr.Bytes)
}

func (r receiver) Ready() <-chan struct{} { return r.in.Ready() }
func (r receiver) Block(p int)            { r.in.Block(p) }
func (r receiver) Unblock(p int)          { r.in.Unblock(p) }
func (r receiver) Close()                 { r.in.Close() }
