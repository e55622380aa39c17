package shuffle

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
)

// codecName is the content-subtype the shuffle's streams select their codec
// by (grpc.CallContentSubtype): the raw bytes of its messages, no protobuf.
const codecName = "weir-shuffle"

func init() { encoding.RegisterCodecV2(rawCodec{}) }

// pool holds every message buffer, sent and received. Its smallest tier is
// above gRPC's pooling threshold, so gRPC frees each buffer back to it; the
// tiers just above the usual batch sizes leave room for a frame's head.
var pool = mem.NewTieredBufferPool(4<<10, 16<<10+64, 32<<10+64, 64<<10+64, 256<<10+64, 1<<20+64, 4<<20+64)

// outMsg is a message to send. Marshal hands its buffers to gRPC, which
// frees them back to pool once written.
type outMsg struct{ bufs mem.BufferSlice }

// inMsg is a received message, copied into one buffer of pool.
type inMsg struct {
	buf *[]byte
	b   []byte
}

// rawCodec is the shuffle's encoding.CodecV2: messages are the bytes they
// carry.
type rawCodec struct{}

func (rawCodec) Name() string { return codecName }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*outMsg)
	if !ok {
		return nil, fmt.Errorf("shuffle: cannot marshal %T", v)
	}
	out := m.bufs
	m.bufs = nil
	return out, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*inMsg)
	if !ok {
		return fmt.Errorf("shuffle: cannot unmarshal into %T", v)
	}
	n := data.Len()
	p := pool.Get(max(n, 1))
	data.CopyTo(*p)
	m.buf, m.b = p, (*p)[:n]
	return nil
}

// newBuf returns a pooled buffer of length n.
func newBuf(n int) *[]byte { return pool.Get(n) }

// freeBuf returns a buffer to the pool.
func freeBuf(p *[]byte) {
	if p != nil {
		pool.Put(p)
	}
}
