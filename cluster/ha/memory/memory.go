// Package memory is an ha.Store held in one process's memory: the HA data
// of a cluster without high availability (a JobManager started without
// --ha) and of tests. Stores opened on one Server with the same cluster id
// share their data, as processes share an etcd; a leadership lives while
// its store renews its lease (every TTL/4), so a paused store loses it
// after TTL as it would on etcd. Nothing survives the process.
package memory

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weirdata/weir/cluster/ha"
)

// Server holds the HA data of the clusters of its stores.
type Server struct {
	mu       sync.Mutex
	ttl      time.Duration
	clusters map[string]*clusterData
	changed  chan struct{} // closed and replaced at every change of leader
}

type clusterData struct {
	epoch   int64 // the last epoch granted
	leader  *Store
	address string
	expires time.Time
	jobs    map[string]ha.Job
	ptrs    map[string]ha.Checkpoint // by id + "/" + incarnation
}

// NewServer returns a Server whose leaderships' leases last ttl (a
// positive duration; one minute when zero).
func NewServer(ttl time.Duration) *Server {
	if ttl <= 0 {
		ttl = time.Minute
	}
	return &Server{ttl: ttl, clusters: map[string]*clusterData{}, changed: make(chan struct{})}
}

// Open returns a store of cluster id cluster.
func (s *Server) Open(cluster string) *Store {
	return &Store{srv: s, cluster: cluster}
}

// Store is one process's handle on a Server's cluster.
type Store struct {
	srv     *Server
	cluster string

	mu     sync.Mutex
	paused bool
	lead   *term
	closed bool
}

// term is a leadership of a Store.
type term struct {
	epoch int64
	lost  chan struct{}
	stop  chan struct{}
	once  sync.Once
}

func (t *term) end() { t.once.Do(func() { close(t.lost) }) }

// data returns the cluster's data, with the server's lock held; an
// expired lease is dropped first.
func (s *Store) data() *clusterData {
	d := s.srv.clusters[s.cluster]
	if d == nil {
		d = &clusterData{jobs: map[string]ha.Job{}, ptrs: map[string]ha.Checkpoint{}}
		s.srv.clusters[s.cluster] = d
	}
	if d.leader != nil && !time.Now().Before(d.expires) {
		d.leader, d.address = nil, ""
		s.srv.notifyLocked()
	}
	return d
}

func (srv *Server) notifyLocked() {
	close(srv.changed)
	srv.changed = make(chan struct{})
}

// Pause stops s renewing its leadership without giving it up, as a
// process stopped by SIGSTOP would (for tests).
func (s *Store) Pause() {
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
}

// Campaign blocks until s leads, announcing address, or ctx ends.
func (s *Store) Campaign(ctx context.Context, address string) (*ha.Leadership, error) {
	for {
		s.srv.mu.Lock()
		d := s.data()
		if d.leader == nil {
			d.epoch++
			t := &term{epoch: d.epoch, lost: make(chan struct{}), stop: make(chan struct{})}
			d.leader, d.address, d.expires = s, address, time.Now().Add(s.srv.ttl)
			s.srv.notifyLocked()
			s.srv.mu.Unlock()
			s.mu.Lock()
			s.lead = t
			s.mu.Unlock()
			go s.renew(t)
			return &ha.Leadership{Epoch: t.epoch, Address: address, Lost: t.lost}, nil
		}
		wait, left := s.srv.changed, time.Until(d.expires)
		s.srv.mu.Unlock()
		timer := time.NewTimer(left)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("memory: campaign: %w", ctx.Err())
		case <-wait:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// renew extends t's lease every TTL/4 until it ends, is stopped, or the
// store is paused; it closes Lost once the lease is gone.
func (s *Store) renew(t *term) {
	tick := time.NewTicker(s.srv.ttl / 4)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			t.end()
			return
		case <-tick.C:
		}
		s.mu.Lock()
		paused := s.paused
		s.mu.Unlock()
		s.srv.mu.Lock()
		d := s.data()
		holds := d.leader == s && d.epoch == t.epoch
		if holds && !paused {
			d.expires = time.Now().Add(s.srv.ttl)
		}
		s.srv.mu.Unlock()
		if !holds {
			t.end()
			return
		}
	}
}

// Resign ends s's leadership, if it leads.
func (s *Store) Resign(ctx context.Context) error {
	s.mu.Lock()
	t := s.lead
	s.lead = nil
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	s.srv.mu.Lock()
	d := s.data()
	if d.leader == s && d.epoch == t.epoch {
		d.leader, d.address = nil, ""
		s.srv.notifyLocked()
	}
	s.srv.mu.Unlock()
	close(t.stop)
	return nil
}

// Leader returns the current leader, or ha.ErrNoLeader.
func (s *Store) Leader(ctx context.Context) (ha.Leader, error) {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	d := s.data()
	if d.leader == nil {
		return ha.Leader{}, ha.ErrNoLeader
	}
	return ha.Leader{Address: d.address, Epoch: d.epoch}, nil
}

// WatchLeader sends the current leader and every change until ctx ends.
func (s *Store) WatchLeader(ctx context.Context) <-chan ha.Leader {
	ch := make(chan ha.Leader)
	go func() {
		defer close(ch)
		var last *ha.Leader
		for {
			s.srv.mu.Lock()
			d := s.data()
			var cur ha.Leader
			if d.leader != nil {
				cur = ha.Leader{Address: d.address, Epoch: d.epoch}
			}
			wait, left := s.srv.changed, time.Duration(-1)
			if d.leader != nil {
				left = time.Until(d.expires)
			}
			s.srv.mu.Unlock()
			if last == nil || *last != cur {
				select {
				case ch <- cur:
				case <-ctx.Done():
					return
				}
				last = &cur
			}
			var tc <-chan time.Time
			if left >= 0 {
				timer := time.NewTimer(left + time.Millisecond)
				defer timer.Stop()
				tc = timer.C
			}
			select {
			case <-ctx.Done():
				return
			case <-wait:
			case <-tc:
			}
		}
	}()
	return ch
}

// fenced runs write with the server's lock held if epoch is the
// leadership of s that still holds, else returns ha.ErrFenced.
func (s *Store) fenced(epoch int64, write func(d *clusterData) error) error {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	d := s.data()
	if d.leader != s || d.epoch != epoch {
		return ha.ErrFenced
	}
	return write(d)
}

// PutJob writes j, fenced by epoch.
func (s *Store) PutJob(ctx context.Context, epoch int64, j ha.Job) error {
	if strings.Contains(j.ID, "/") || strings.Contains(j.Incarnation, "/") {
		return fmt.Errorf("memory: put job: id %q, incarnation %q: want names without '/'", j.ID, j.Incarnation)
	}
	return s.fenced(epoch, func(d *clusterData) error {
		if old, ok := d.jobs[j.ID]; ok && old.Incarnation != j.Incarnation {
			delete(d.ptrs, j.ID+"/"+old.Incarnation)
		}
		j.Spec = append([]byte(nil), j.Spec...)
		d.jobs[j.ID] = j
		return nil
	})
}

// Jobs returns the jobs stored, by id.
func (s *Store) Jobs(ctx context.Context) ([]ha.Job, error) {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	d := s.data()
	jobs := make([]ha.Job, 0, len(d.jobs))
	for _, j := range d.jobs {
		j.Spec = append([]byte(nil), j.Spec...)
		jobs = append(jobs, j)
	}
	sortJobs(jobs)
	return jobs, nil
}

func sortJobs(jobs []ha.Job) {
	for i := 1; i < len(jobs); i++ {
		for k := i; k > 0 && jobs[k].ID < jobs[k-1].ID; k-- {
			jobs[k], jobs[k-1] = jobs[k-1], jobs[k]
		}
	}
}

// SetCheckpoint sets the pointer of job id's incarnation, fenced by epoch;
// it only grows.
func (s *Store) SetCheckpoint(ctx context.Context, epoch int64, id, incarnation string, c ha.Checkpoint) error {
	return s.fenced(epoch, func(d *clusterData) error {
		j, ok := d.jobs[id]
		if !ok || j.Incarnation != incarnation {
			return fmt.Errorf("memory: checkpoint of job %s incarnation %s: %w", id, incarnation, ha.ErrNotFound)
		}
		k := id + "/" + incarnation
		if old, ok := d.ptrs[k]; ok && c.ID <= old.ID {
			return fmt.Errorf("memory: set checkpoint of job %s to %d: checkpoint %d is stored already", id, c.ID, old.ID)
		}
		d.ptrs[k] = c
		return nil
	})
}

// LatestCheckpoint returns the pointer of job id's incarnation.
func (s *Store) LatestCheckpoint(ctx context.Context, id, incarnation string) (ha.Checkpoint, bool, error) {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	c, ok := s.data().ptrs[id+"/"+incarnation]
	return c, ok, nil
}

// RemoveJob removes job id's incarnation and its pointers, fenced by epoch.
func (s *Store) RemoveJob(ctx context.Context, epoch int64, id, incarnation string) error {
	return s.fenced(epoch, func(d *clusterData) error {
		j, ok := d.jobs[id]
		if !ok || j.Incarnation != incarnation {
			return fmt.Errorf("memory: remove job %s incarnation %s: %w", id, incarnation, ha.ErrNotFound)
		}
		delete(d.jobs, id)
		delete(d.ptrs, id+"/"+incarnation)
		return nil
	})
}

// Close resigns.
func (s *Store) Close() error { return s.Resign(context.Background()) }

var _ ha.Store = (*Store)(nil)
