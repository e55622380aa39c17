package shuffle

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	// toxiproxy's own link goroutines may outlive Proxy.Stop, blocked on a
	// channel of the toxic chain it tore down: its leak, not the package's
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2/toxics.(*ToxicStub).Run"))
}

// fast are options whose heartbeats detect a silent peer in about two
// seconds.
var fast = Options{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 2 * time.Second}

// node is a consumer process's side in a test: a Server on a grpc.Server
// listening on loopback.
type node struct {
	srv  *Server
	gs   *grpc.Server
	addr string
}

func startNode(t testing.TB, opts Options) *node {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &node{srv: NewServer(opts), gs: grpc.NewServer(ServerOptions(opts)...), addr: lis.Addr().String()}
	n.srv.Register(n.gs)
	go n.gs.Serve(lis)
	t.Cleanup(n.gs.Stop)
	return n
}

func newClient(t testing.TB, opts Options) *Client {
	t.Helper()
	cl := NewClient(opts)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// payload returns frame seq of producer p: its producer and sequence number
// then bytes derived from them, of a length that varies with seq.
func payload(p, seq int) []byte {
	r := rand.New(rand.NewPCG(uint64(p), uint64(seq)))
	b := make([]byte, 16+r.IntN(3000))
	binary.LittleEndian.PutUint64(b, uint64(p))
	binary.LittleEndian.PutUint64(b[8:], uint64(seq))
	for i := 16; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// received is what a consumer saw of a channel: each frame as a string of
// its type, kind and bytes, in order.
type received map[int][]string

func frameString(f Frame) string {
	return fmt.Sprintf("%d/%d/%x", f.Type, f.Kind, f.Bytes)
}

func sentString(typ FrameType, kind EventKind, b []byte) string {
	return fmt.Sprintf("%d/%d/%x", typ, kind, b)
}

// drain polls in until io.EOF, calling each on every frame; it fails the
// test on any other error or when ctx ends.
func drain(ctx context.Context, t testing.TB, in *Inbox, each func(Frame)) error {
	for {
		f, ok, err := in.Poll()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if ok {
			each(f)
			f.Release()
			continue
		}
		select {
		case <-in.Ready():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitFor waits until cond, checked under in's lock, holds; Ready wakes it
// on each arrival.
func waitFor(ctx context.Context, t testing.TB, in *Inbox, cond func() bool) {
	t.Helper()
	for {
		in.mu.Lock()
		ok := cond()
		in.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-in.Ready():
		case <-time.After(10 * time.Millisecond): // a frame may have been signalled already
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
