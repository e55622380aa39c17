package flow

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// A sampled Range edge whose producers run in several processes shares
// the samples: each producer here, once it published its sample, sends it
// to every producer elsewhere over a sample channel (one data frame, then
// EndOfPartition), and each process takes the first copy of every remote
// producer's sample into its sampler. Every process then holds every
// producer's sample and computes the same bounds (boundsFromSamples is
// deterministic in the producers' order), so records route alike wherever
// they are.

// sampleEdge is the edge number of an edge's sample channels: producer
// subtask to producer subtask of its From vertex.
func sampleEdge(e int) int { return e | 1<<30 }

// remoteSample is a sampled Range edge's sample channels. It is not
// generic: the samples are bytes whatever the edge's record type, so its
// code is compiled once, not once per record type.
type remoteSample struct {
	j       *job
	e       *edgeBase
	nProd   int
	sampler *rangeSampler
	// rcv[q] receives the samples sent to producer q here
	rcv []Receiver
	// remote counts the producers elsewhere
	remote int
}

// startSample registers the sample inboxes of the producers here of edge
// e, whose sampler is s, when some producer of e runs elsewhere; it
// returns nil when none does.
func startSample(j *job, e *edgeBase, nProd int, s *rangeSampler) (*remoteSample, error) {
	if s == nil || j.opts.Remote == nil {
		return nil, nil
	}
	rs := &remoteSample{j: j, e: e, nProd: nProd, sampler: s, rcv: make([]Receiver, nProd)}
	for p := range nProd {
		if !j.here(e.from, p) {
			rs.remote++
		}
	}
	if rs.remote == 0 {
		return nil, nil
	}
	for q := range nProd {
		if !j.here(e.from, q) {
			continue
		}
		rcv, err := j.opts.Remote.Transport.Inbox(sampleEdge(e.index), q, nProd, max(j.opts.ChannelBuffers, 2))
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("flow: edge %s sample of producer %d: %w", e.name, q, err)
		}
		rs.rcv[q] = rcv
	}
	return rs, nil
}

// run starts a goroutine per producer here that takes the samples sent
// to it.
func (rs *remoteSample) run() {
	if rs == nil {
		return
	}
	j := rs.j
	for q, rcv := range rs.rcv {
		if rcv == nil {
			continue
		}
		j.bg.Add(1)
		go func() {
			defer j.bg.Done()
			if err := rs.take(rcv, rs.remote); err != nil && j.ctx.Err() == nil {
				j.fail(fmt.Errorf("flow: edge %s sample of producer %d: %w", rs.e.name, q, err))
			}
		}()
	}
}

// take reads the samples of the n producers elsewhere off rcv until each
// one's EndOfPartition.
func (rs *remoteSample) take(rcv Receiver, n int) error {
	ctx := rs.j.ctx
	for n > 0 {
		ok, err := rcv.Poll(func(p int, kind EventKind, b []byte) error {
			switch kind {
			case 0:
				keys, seen, err := decodeSample(b)
				if err != nil {
					return fmt.Errorf("producer %d: %w", p, err)
				}
				rs.sampler.publishRemote(p, keys, seen)
			case EndOfPartition:
				n--
			default:
				return fmt.Errorf("%v event from producer %d on a sample channel", kind, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		select {
		case <-rcv.Ready():
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// send sends producer p's sample to every producer elsewhere.
func (rs *remoteSample) send(ctx context.Context, p int, r *reservoir) error {
	if rs == nil {
		return nil
	}
	j, e := rs.j, rs.e
	b := encodeSample(nil, r.keys, r.seen)
	for q := range rs.nProd {
		if j.here(e.from, q) {
			continue
		}
		snd, err := j.opts.Remote.Transport.Open(ctx, Channel{Edge: sampleEdge(e.index), From: e.from.index, To: e.from.index, Producer: p, Consumer: q})
		if err == nil {
			err = snd.Send(ctx, b)
		}
		if err == nil {
			err = snd.Close(ctx)
		}
		if err != nil {
			return fmt.Errorf("flow: edge %s: send the sample of producer %d to producer %d: %w", e.name, p, q, err)
		}
	}
	return nil
}

// close closes the sample receivers.
func (rs *remoteSample) close() {
	if rs == nil {
		return
	}
	for _, rcv := range rs.rcv {
		if rcv != nil {
			rcv.Close()
		}
	}
}

// encodeSample appends a sample: how many records its producer saw, the
// number of keys, then each key with its length.
func encodeSample(b []byte, keys [][]byte, seen int64) []byte {
	b = binary.AppendUvarint(b, uint64(seen))
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	return b
}

var errSample = errors.New("malformed sample")

// decodeSample reads what encodeSample wrote; the keys are copies.
func decodeSample(b []byte) (keys [][]byte, seen int64, err error) {
	s, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, 0, errSample
	}
	b = b[n:]
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return nil, 0, errSample
	}
	b = b[n:]
	keys = make([][]byte, 0, count)
	for range count {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, 0, errSample
		}
		keys = append(keys, append([]byte{}, b[n:n+int(l)]...))
		b = b[n+int(l):]
	}
	if len(b) != 0 {
		return nil, 0, errSample
	}
	return keys, int64(s), nil
}
