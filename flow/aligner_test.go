package flow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// scriptedReader returns a Reader over one consumer's channels pre-filled with
// msgs, as if nProd producers had sent them in that order.
func scriptedReader(nProd int, msgs []message) *Reader[rec] {
	jctx, cancel := context.WithCancelCause(bg)
	_ = cancel
	in := newInbox(nProd, max(len(msgs), 1))
	x := &exchange{
		mode: Pipelined, nProd: nProd, nCons: 1, batchSize: 4,
		inbox: []*inbox{in},
		free:  make(chan rawBatch, 4),
		j:     &job{ctx: jctx, cancel: cancel},
		e:     &edgeBase{name: "scripted"},
		ops:   ops[rec]{},
	}
	for _, m := range msgs {
		in.mu.Lock()
		in.put(m.src, m)
		in.mu.Unlock()
	}
	r := &Reader[rec]{consumer: consumer{x: x, in: in, tc: &TaskContext{Metrics: &TaskMetrics{}}, ended: make([]bool, nProd), live: nProd}}
	return r
}

func data(src int, seq ...int64) message {
	b := make([]rec, len(seq))
	for i, s := range seq {
		b[i] = rec{Prod: int32(src), Seq: s}
	}
	return message{batch: wrap(b), src: src}
}

func event(src int, k EventKind, v int64) message {
	return message{ev: Event{Kind: k, Value: v, Source: src}, src: src}
}

// drain returns what an Aligner delivers, as strings.
func drain(a *Aligner[rec]) ([]string, error) {
	var out []string
	for {
		b, ev, err := a.Next(bg)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if ev != nil {
			out = append(out, fmt.Sprintf("%v:%d", ev.Kind, ev.Value))
			continue
		}
		for _, r := range b {
			out = append(out, fmt.Sprintf("p%d.%d", r.Prod, r.Seq))
		}
	}
}

func TestAlignerScripts(t *testing.T) {
	cases := []struct {
		name string
		n    int
		msgs []message
		want []string
	}{
		{
			name: "parks the aligned channel's data",
			n:    2,
			msgs: []message{
				data(0, 1), event(0, Barrier, 1), data(0, 2), data(1, 1),
				event(1, Barrier, 1), data(1, 2), event(0, EndOfPartition, 0), event(1, EndOfPartition, 0),
			},
			want: []string{"p0.1", "p1.1", "Barrier:1", "p0.2", "p1.2"},
		},
		{
			name: "ended channel counts as aligned, watermark and barrier at once",
			n:    2,
			msgs: []message{
				event(0, Watermark, 5), event(1, Watermark, 3), event(0, Barrier, 1),
				event(0, EndOfPartition, 0), data(1, 1), event(1, EndOfPartition, 0),
			},
			want: []string{"Watermark:3", "p1.1", "Watermark:5", "Barrier:1"},
		},
		{
			name: "supersteps in sequence",
			n:    2,
			msgs: []message{
				event(0, EndOfSuperstep, 0), data(0, 1), event(0, EndOfSuperstep, 1), data(1, 1),
				event(1, EndOfSuperstep, 0), data(1, 2), event(1, EndOfSuperstep, 1),
				event(0, EndOfPartition, 0), event(1, EndOfPartition, 0),
			},
			want: []string{"p1.1", "EndOfSuperstep:0", "p0.1", "p1.2", "EndOfSuperstep:1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := drain(NewAligner(scriptedReader(tc.n, tc.msgs)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestAlignerMismatch(t *testing.T) {
	r := scriptedReader(2, []message{event(0, Barrier, 1), event(1, Barrier, 2)})
	if _, err := drain(NewAligner(r)); err == nil {
		t.Fatal("barriers 1 and 2 aligned")
	}
}
