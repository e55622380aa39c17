// Package rpc is the control plane between a JobManager and its
// TaskManagers: a gRPC service written by hand (no protoc) whose messages
// are JSON, under a codec of its own name.
//
// A TaskManager opens one Connect stream to the leading JobManager: it
// sends Register first, then a Heartbeat and a Report of each running
// attempt every interval, and a Status for each attempt that started or
// ended; the JobManager answers Register
// with Accepted or Refused, and sends Deploy, Cancel, Savepoint and its
// own Heartbeat. Every JobManager message carries the leader's epoch. The
// Gate call asks the JobManager to record an attempt's checkpoint.
package rpc

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"

	"github.com/weirdata/weir/cluster"
)

// Codec is the name of the JSON codec the service's calls use.
const Codec = "weir-json"

type codec struct{}

func (codec) Marshal(v any) ([]byte, error)   { return json.Marshal(v) }
func (codec) Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
func (codec) Name() string                    { return Codec }

func init() { encoding.RegisterCodec(codec{}) }

// MaxMessage is the largest message the JobManager receives: a Status
// with cluster.MaxStdout bytes of output (base64 in JSON) and a Report.
const MaxMessage = 4 * cluster.MaxStdout

// CallOptions are the options of every call of the service.
var CallOptions = []grpc.CallOption{grpc.CallContentSubtype(Codec)}

// FromTM is a TaskManager's message on the Connect stream; one field set.
type FromTM struct {
	Register      *Register      `json:"register,omitempty"`
	Heartbeat     bool           `json:"heartbeat,omitempty"`
	Status        *Status        `json:"status,omitempty"`
	SavepointDone *SavepointDone `json:"savepointDone,omitempty"`
	Report        *Report        `json:"report,omitempty"`
}

// Report carries a running attempt's cluster.Control.Report.
type Report struct {
	JobID   string `json:"jobId"`
	Attempt string `json:"attempt"`
	Data    []byte `json:"data"`
}

// Register opens a TaskManager's stream.
type Register struct {
	ID          string              `json:"id"`
	Address     string              `json:"address"`
	Slots       int                 `json:"slots"`
	Fingerprint cluster.Fingerprint `json:"fingerprint"`
	// CPUCores and Memory are its cores and memory budget in bytes (0:
	// none), as the REST API shows them.
	CPUCores int   `json:"cpuCores,omitempty"`
	Memory   int64 `json:"memory,omitempty"`
	// DataAddress is where its shuffle server listens ("": it takes no
	// share of a spread attempt).
	DataAddress string `json:"dataAddress,omitempty"`
}

// Attempt states a Status reports.
const (
	Running  = "RUNNING"
	Finished = "FINISHED"
	Failed   = "FAILED"
	Canceled = "CANCELED"
)

// Status is an attempt's state on its TaskManager.
type Status struct {
	JobID   string `json:"jobId"`
	Attempt string `json:"attempt"`
	State   string `json:"state"`
	Error   string `json:"error,omitempty"`
	// Unrecoverable says no restart can cure the failure.
	Unrecoverable bool             `json:"unrecoverable,omitempty"`
	Vertices      []cluster.Vertex `json:"vertices,omitempty"`
	// Report is the attempt's last Report, sent with its end.
	Report []byte `json:"report,omitempty"`
	// Stdout is the first cluster.MaxStdout bytes of a finished
	// attempt's standard output; StdoutDropped counts the bytes past
	// them.
	Stdout        []byte `json:"stdout,omitempty"`
	StdoutDropped int64  `json:"stdoutDropped,omitempty"`
}

// SavepointDone answers a Savepoint.
type SavepointDone struct {
	JobID   string `json:"jobId"`
	Trigger string `json:"trigger"`
	Path    string `json:"path,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ToTM is a JobManager's message on the Connect stream: Epoch and one
// other field set.
type ToTM struct {
	Epoch     int64      `json:"epoch"`
	Accepted  *Accepted  `json:"accepted,omitempty"`
	Refused   string     `json:"refused,omitempty"`
	Heartbeat bool       `json:"heartbeat,omitempty"`
	Deploy    *Deploy    `json:"deploy,omitempty"`
	Cancel    *Cancel    `json:"cancel,omitempty"`
	Savepoint *Savepoint `json:"savepoint,omitempty"`
}

// Accepted answers a Register.
type Accepted struct {
	// TimeoutMillis is how long either side waits for the other's
	// messages before it declares the other lost.
	TimeoutMillis int64 `json:"timeoutMillis"`
}

// Deploy starts an attempt of a job.
type Deploy struct {
	JobID         string   `json:"jobId"`
	Attempt       string   `json:"attempt"`
	Args          []string `json:"args"`
	CheckpointDir string   `json:"checkpointDir"`
	Restore       string   `json:"restore,omitempty"`
	Slots         int      `json:"slots"`
	// Spread, for a share of a spread attempt, places the shares.
	Spread *Spread `json:"spread,omitempty"`
}

// Spread places the shares of a spread attempt: this one's index, and the
// slots and the data address of each.
type Spread struct {
	Part  int      `json:"part"`
	Slots []int    `json:"slots"`
	Addrs []string `json:"addrs"`
}

// Cancel ends an attempt.
type Cancel struct {
	JobID   string `json:"jobId"`
	Attempt string `json:"attempt"`
}

// Savepoint asks an attempt for a savepoint.
type Savepoint struct {
	JobID   string `json:"jobId"`
	Attempt string `json:"attempt"`
	Trigger string `json:"trigger"`
	Dir     string `json:"dir"`
	Stop    bool   `json:"stop"`
}

// GateRequest asks the JobManager to record a checkpoint of an attempt.
type GateRequest struct {
	JobID      string `json:"jobId"`
	Attempt    string `json:"attempt"`
	Epoch      int64  `json:"epoch"`
	Checkpoint int64  `json:"checkpoint"`
	Path       string `json:"path"`
}

// GateReply accepts a GateRequest.
type GateReply struct{}

// Server is the JobManager's side of the service.
type Server interface {
	Connect(stream grpc.ServerStream) error
	Gate(ctx context.Context, req *GateRequest) (*GateReply, error)
}

const service = "weir.cluster.JobManager"

// Method names.
const (
	ConnectMethod = "/" + service + "/Connect"
	GateMethod    = "/" + service + "/Gate"
)

// ServiceDesc describes the service for grpc.Server.RegisterService.
var ServiceDesc = grpc.ServiceDesc{
	ServiceName: service,
	HandlerType: (*Server)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Gate", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		in := new(GateRequest)
		if err := dec(in); err != nil {
			return nil, err
		}
		return srv.(Server).Gate(ctx, in)
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Connect", ServerStreams: true, ClientStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error { return srv.(Server).Connect(stream) }}},
}

// Connect opens a TaskManager's stream on conn.
func Connect(ctx context.Context, conn *grpc.ClientConn) (grpc.ClientStream, error) {
	return conn.NewStream(ctx, &ServiceDesc.Streams[0], ConnectMethod, CallOptions...)
}

// Gate calls the Gate method on conn.
func Gate(ctx context.Context, conn *grpc.ClientConn, req *GateRequest) error {
	return conn.Invoke(ctx, GateMethod, req, new(GateReply), CallOptions...)
}
