package memory

import (
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/ha/hatest"
)

func backend() hatest.Backend {
	srv := NewServer(time.Second)
	return hatest.Backend{
		Open: func(t *testing.T, cluster string) ha.Store {
			s := srv.Open(cluster)
			t.Cleanup(func() { s.Close() })
			return s
		},
		Pause:     func(s ha.Store) { s.(*Store).Pause() },
		LeaseWait: 5 * time.Second,
	}
}

// TestElection: hatest.Election in memory.
func TestElection(t *testing.T) { hatest.Election(t, backend()) }

// TestJobs: hatest.Jobs in memory.
func TestJobs(t *testing.T) { hatest.Jobs(t, backend()) }
