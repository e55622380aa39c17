// Package shuffletest starts shuffle peers on loopback for the tests of
// the packages that carry records between processes: one Server and one
// Client per process, as a TaskManager has.
package shuffletest

import (
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/weirdata/weir/cluster/shuffle"
)

// Peer is one process of a test: a shuffle Server listening on Addr (a
// loopback address) and a Client.
type Peer struct {
	Server *shuffle.Server
	Client *shuffle.Client
	Addr   string

	stop sync.Once
	gs   *grpc.Server
	done chan struct{}
}

// Stop closes the Client and stops the server, as the process's death
// would: its peers' connections break. The test's cleanup calls it too.
func (p *Peer) Stop() {
	p.stop.Do(func() {
		p.Client.Close()
		p.gs.Stop()
		<-p.done
	})
}

// Start starts a Peer with opts; the test's cleanup closes its Client and
// stops its server.
func Start(t testing.TB, opts shuffle.Options) *Peer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Peer{Server: shuffle.NewServer(opts), Client: shuffle.NewClient(opts), Addr: lis.Addr().String(),
		gs: grpc.NewServer(shuffle.ServerOptions(opts)...), done: make(chan struct{})}
	p.Server.Register(p.gs)
	go func() {
		defer close(p.done)
		_ = p.gs.Serve(lis)
	}()
	t.Cleanup(p.Stop)
	return p
}
