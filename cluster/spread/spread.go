// Package spread connects a share of a spread attempt to the program it
// runs: a cluster.Program whose jobs spread (cluster.Spreader) builds its
// dataset.Env with Options.Spread = Dataset(env.Spread), or its stream.Env
// with Options.Spread = Stream(env.Spread, env.JobID), and the share's
// subtasks exchange records with the other shares over the TaskManager's
// shuffle (cluster/dataplane).
package spread

import (
	"fmt"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/stream"
)

// Dataset returns the dataset.Spread of share s, nil when s is nil (the
// attempt runs in one TaskManager). The channels of the program's
// execution number n are named s.Channels + "/" + n, so two executions,
// and two attempts, never mix.
func Dataset(s *cluster.Spread) *dataset.Spread {
	if s == nil {
		return nil
	}
	return &dataset.Spread{Part: s.Part, Slots: s.Slots, Transport: func(stage int, part func(v, i int) int) (dataset.Transport, error) {
		return &dataplane.Transport{Job: fmt.Sprintf("%s/%d", s.Channels, stage), Client: s.Client, Server: s.Server,
			Addr: func(v, i int) string { return s.Addrs[part(v, i)] }}, nil
	}}
}

// Stream returns the stream.Spread of share s of job (its id), nil when s
// is nil. Share 0 is the job's part 0, which coordinates its checkpoints:
// the JobManager sends savepoint requests to the first share's
// TaskManager. The attempt's channels are named s.Channels, which tells
// attempts apart.
func Stream(s *cluster.Spread, job string) *stream.Spread {
	if s == nil {
		return nil
	}
	return &stream.Spread{Part: s.Part, Slots: s.Slots, Job: job, Transport: func(part func(v, i int) int) (stream.Transport, error) {
		return &dataplane.Transport{Job: s.Channels, Client: s.Client, Server: s.Server,
			Addr: func(v, i int) string { return s.Addrs[part(v, i)] }}, nil
	}}
}
