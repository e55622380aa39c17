package shuffle

import (
	"errors"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// ErrBroken is a connection that broke: the peer process died, the stream
// was reset, or the peer sent nothing for Options.HeartbeatTimeout. The
// error wrapping it names the peer.
var ErrBroken = errors.New("shuffle: connection broken")

// Options are a process's shuffle settings; zero fields take defaults.
type Options struct {
	// Name is this process's name in the errors its peers report (a
	// TaskManager's id). Default: the host name and process id.
	Name string
	// HeartbeatInterval is how often each side of a connection sends a
	// heartbeat. Default 500ms.
	HeartbeatInterval time.Duration
	// HeartbeatTimeout is how long a peer may send nothing before its
	// connection counts as broken. Default 5s.
	HeartbeatTimeout time.Duration
	// MaxFrameSize bounds a frame's bytes. Default 64 MiB.
	MaxFrameSize int
}

func (o *Options) ensureDefaults() {
	if o.Name == "" {
		h, _ := os.Hostname()
		o.Name = h + "/" + strconv.Itoa(os.Getpid())
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 500 * time.Millisecond
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = 5 * time.Second
	}
	if o.HeartbeatTimeout < 2*o.HeartbeatInterval {
		o.HeartbeatTimeout = 2 * o.HeartbeatInterval
	}
	if o.MaxFrameSize <= 0 {
		o.MaxFrameSize = 64 << 20
	}
}

// ServerOptions returns the grpc.ServerOptions a process's grpc.Server
// needs to serve the shuffle: the frame size, and keepalive settings that
// accept the clients' pings and probe idle clients.
func ServerOptions(opts Options) []grpc.ServerOption {
	opts.ensureDefaults()
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(opts.MaxFrameSize + headerMax),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: opts.HeartbeatTimeout, Timeout: opts.HeartbeatTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	}
}

// dialOptions are the options of a Client's connections.
func dialOptions(opts Options) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(opts.MaxFrameSize+headerMax), grpc.CallContentSubtype(codecName)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: opts.HeartbeatTimeout, PermitWithoutStream: true}),
	}
}

// service is what the service's handler calls.
type service interface {
	serve(grpc.ServerStream) error
}

// methodExchange is the full name of the one method: a bidirectional
// stream, producer to consumer.
const methodExchange = "/weir.shuffle.Shuffle/Exchange"

// serviceDesc is the shuffle service, written by hand: its messages are raw
// bytes (rawCodec), so there is no .proto.
var serviceDesc = grpc.ServiceDesc{
	ServiceName: "weir.shuffle.Shuffle",
	HandlerType: (*service)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "Exchange",
		Handler:       func(srv any, stream grpc.ServerStream) error { return srv.(service).serve(stream) },
		ServerStreams: true,
		ClientStreams: true,
	}},
}
