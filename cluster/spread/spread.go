// Package spread connects a share of a spread attempt to the DataSet
// program it runs: a cluster.Program whose jobs spread (cluster.Spreader)
// builds its dataset.Env with Options.Spread = Dataset(env.Spread), and
// the share's subtasks exchange records with the other shares over the
// TaskManager's shuffle (cluster/dataplane).
package spread

import (
	"fmt"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/dataset"
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
