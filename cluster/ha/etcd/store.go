package etcd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/weirdata/weir/cluster/ha"
)

// Config says how to reach etcd and which cluster's data to use.
type Config struct {
	// Endpoints are etcd's client URLs.
	Endpoints []string
	// ClusterID namespaces the cluster's keys.
	ClusterID string
	// LeaseTTL is how long a leadership outlives its holder's silence
	// (default 10 s; at least 1 s).
	LeaseTTL time.Duration
	// DialTimeout bounds the first connection (default 5 s).
	DialTimeout time.Duration
	// TLS, if set, secures the connections (client certificates too).
	TLS *tls.Config
	// Username and Password authenticate with etcd's role-based access.
	Username, Password string
}

// Store is an ha.Store on etcd.
type Store struct {
	cli    *clientv3.Client
	prefix string // /weir/<cluster>/
	ttl    int

	mu       sync.Mutex
	session  *concurrency.Session
	election *concurrency.Election
}

var _ ha.Store = (*Store)(nil)

// Open connects to etcd. An unreachable etcd is an error naming its
// endpoints within the dial timeout.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	if cfg.ClusterID == "" || strings.Contains(cfg.ClusterID, "/") {
		return nil, fmt.Errorf("etcd: cluster id %q: want a name without '/'", cfg.ClusterID)
	}
	ttl := cfg.LeaseTTL
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	dial := cfg.DialTimeout
	if dial <= 0 {
		dial = 5 * time.Second
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: dial, Context: ctx,
		Logger: zap.NewNop(), TLS: cfg.TLS, Username: cfg.Username, Password: cfg.Password})
	if err != nil {
		return nil, fmt.Errorf("etcd: %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	// The client connects lazily: ask for something to know etcd answers.
	sctx, cancel := context.WithTimeout(ctx, dial)
	defer cancel()
	if _, err := cli.Get(sctx, "/weir/"+cfg.ClusterID+"/", clientv3.WithCountOnly()); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd: %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return &Store{cli: cli, prefix: "/weir/" + cfg.ClusterID + "/", ttl: max(int(ttl/time.Second), 1)}, nil
}

func (s *Store) leaderPrefix() string { return s.prefix + "leader/" }

func (s *Store) jobKey(id string) string { return s.prefix + "jobs/" + id }

func (s *Store) checkpointKey(id, incarnation string) string {
	return s.prefix + "checkpoints/" + id + "/" + incarnation
}

// Campaign blocks until this store's process leads.
func (s *Store) Campaign(ctx context.Context, address string) (*ha.Leadership, error) {
	s.mu.Lock()
	if s.session != nil {
		s.mu.Unlock()
		return nil, errors.New("etcd: campaign: already campaigning")
	}
	sess, err := concurrency.NewSession(s.cli, concurrency.WithTTL(s.ttl))
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("etcd: campaign: %w", err)
	}
	e := concurrency.NewElection(sess, s.leaderPrefix())
	s.session, s.election = sess, e
	s.mu.Unlock()
	if err := e.Campaign(ctx, address); err != nil {
		s.mu.Lock()
		s.session, s.election = nil, nil
		s.mu.Unlock()
		sess.Close()
		return nil, fmt.Errorf("etcd: campaign: %w", err)
	}
	return &ha.Leadership{Epoch: e.Rev(), Address: address, Lost: sess.Done()}, nil
}

// Resign ends the leadership (or the campaign) and revokes its lease.
func (s *Store) Resign(ctx context.Context) error {
	s.mu.Lock()
	sess, e := s.session, s.election
	s.session, s.election = nil, nil
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	err := e.Resign(ctx)
	if cerr := sess.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("etcd: resign: %w", err)
	}
	return nil
}

// Leader returns the current leader.
func (s *Store) Leader(ctx context.Context) (ha.Leader, error) {
	resp, err := s.cli.Get(ctx, s.leaderPrefix(), clientv3.WithFirstCreate()...)
	if err != nil {
		return ha.Leader{}, fmt.Errorf("etcd: leader: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return ha.Leader{}, ha.ErrNoLeader
	}
	kv := resp.Kvs[0]
	return ha.Leader{Address: string(kv.Value), Epoch: kv.CreateRevision}, nil
}

// WatchLeader sends the leader now and at every change.
func (s *Store) WatchLeader(ctx context.Context) <-chan ha.Leader {
	ch := make(chan ha.Leader, 1)
	go func() {
		defer close(ch)
		var last ha.Leader
		first := true
		for ctx.Err() == nil {
			resp, err := s.cli.Get(ctx, s.leaderPrefix(), clientv3.WithFirstCreate()...)
			if err != nil {
				if !sleep(ctx, 100*time.Millisecond) {
					return
				}
				continue
			}
			var cur ha.Leader
			if len(resp.Kvs) > 0 {
				cur = ha.Leader{Address: string(resp.Kvs[0].Value), Epoch: resp.Kvs[0].CreateRevision}
			}
			if first || cur != last {
				select {
				case ch <- cur:
				case <-ctx.Done():
					return
				}
				first, last = false, cur
			}
			// Wait for any change under leader/ after what was read.
			wctx, cancel := context.WithCancel(ctx)
			w := s.cli.Watch(wctx, s.leaderPrefix(), clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
			for wr := range w {
				if wr.Err() != nil || len(wr.Events) > 0 {
					break
				}
			}
			cancel()
		}
	}()
	return ch
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fence returns the guard of a write of epoch: this store's leader key
// still created at epoch.
func (s *Store) fence(epoch int64) (clientv3.Cmp, error) {
	s.mu.Lock()
	e := s.election
	s.mu.Unlock()
	if e == nil || e.Key() == "" {
		return clientv3.Cmp{}, ha.ErrFenced
	}
	return clientv3.Compare(clientv3.CreateRevision(e.Key()), "=", epoch), nil
}

// PutJob writes j, fenced by epoch.
func (s *Store) PutJob(ctx context.Context, epoch int64, j ha.Job) error {
	if j.ID == "" || strings.Contains(j.ID, "/") || j.Incarnation == "" || strings.Contains(j.Incarnation, "/") {
		return fmt.Errorf("etcd: put job: id %q, incarnation %q: want names without '/'", j.ID, j.Incarnation)
	}
	g, err := s.fence(epoch)
	if err != nil {
		return fmt.Errorf("etcd: put job %s: %w", j.ID, err)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("etcd: put job %s: %w", j.ID, err)
	}
	resp, err := s.cli.Txn(ctx).If(g).Then(clientv3.OpPut(s.jobKey(j.ID), string(b))).Commit()
	if err != nil {
		return fmt.Errorf("etcd: put job %s: %w", j.ID, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcd: put job %s at epoch %d: %w", j.ID, epoch, ha.ErrFenced)
	}
	return nil
}

// Jobs returns the jobs stored, by id.
func (s *Store) Jobs(ctx context.Context) ([]ha.Job, error) {
	resp, err := s.cli.Get(ctx, s.prefix+"jobs/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("etcd: jobs: %w", err)
	}
	jobs := make([]ha.Job, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var j ha.Job
		if err := json.Unmarshal(kv.Value, &j); err != nil {
			return nil, fmt.Errorf("etcd: job %s: %w", kv.Key, err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// job reads job id with its key's modification revision.
func (s *Store) job(ctx context.Context, id string) (ha.Job, int64, error) {
	resp, err := s.cli.Get(ctx, s.jobKey(id))
	if err != nil {
		return ha.Job{}, 0, err
	}
	if len(resp.Kvs) == 0 {
		return ha.Job{}, 0, fmt.Errorf("job %s: %w", id, ha.ErrNotFound)
	}
	var j ha.Job
	if err := json.Unmarshal(resp.Kvs[0].Value, &j); err != nil {
		return ha.Job{}, 0, fmt.Errorf("job %s: %w", id, err)
	}
	return j, resp.Kvs[0].ModRevision, nil
}

// SetCheckpoint sets the pointer of job id's incarnation to c.
func (s *Store) SetCheckpoint(ctx context.Context, epoch int64, id, incarnation string, c ha.Checkpoint) error {
	g, err := s.fence(epoch)
	if err != nil {
		return fmt.Errorf("etcd: set checkpoint of job %s: %w", id, err)
	}
	j, jobRev, err := s.job(ctx, id)
	if err != nil {
		return fmt.Errorf("etcd: set checkpoint: %w", err)
	}
	if j.Incarnation != incarnation {
		return fmt.Errorf("etcd: set checkpoint of job %s incarnation %s: the job stored is incarnation %s: %w", id, incarnation, j.Incarnation, ha.ErrNotFound)
	}
	key := s.checkpointKey(id, incarnation)
	cur, err := s.cli.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("etcd: set checkpoint of job %s: %w", id, err)
	}
	var ptrRev int64
	if len(cur.Kvs) > 0 {
		var old ha.Checkpoint
		if err := json.Unmarshal(cur.Kvs[0].Value, &old); err != nil {
			return fmt.Errorf("etcd: checkpoint of job %s: %w", id, err)
		}
		if c.ID <= old.ID {
			return fmt.Errorf("etcd: set checkpoint of job %s to %d: checkpoint %d is stored already", id, c.ID, old.ID)
		}
		ptrRev = cur.Kvs[0].ModRevision
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	resp, err := s.cli.Txn(ctx).If(g,
		clientv3.Compare(clientv3.ModRevision(s.jobKey(id)), "=", jobRev),
		clientv3.Compare(clientv3.ModRevision(key), "=", ptrRev),
	).Then(clientv3.OpPut(key, string(b))).Commit()
	if err != nil {
		return fmt.Errorf("etcd: set checkpoint of job %s: %w", id, err)
	}
	if !resp.Succeeded {
		// Tell a lost leadership from a concurrent change.
		if r, err := s.cli.Txn(ctx).If(g).Commit(); err == nil && !r.Succeeded {
			return fmt.Errorf("etcd: set checkpoint of job %s at epoch %d: %w", id, epoch, ha.ErrFenced)
		}
		return fmt.Errorf("etcd: set checkpoint of job %s: the job or its pointer changed meanwhile", id)
	}
	return nil
}

// LatestCheckpoint returns the pointer of job id's incarnation.
func (s *Store) LatestCheckpoint(ctx context.Context, id, incarnation string) (ha.Checkpoint, bool, error) {
	resp, err := s.cli.Get(ctx, s.checkpointKey(id, incarnation))
	if err != nil {
		return ha.Checkpoint{}, false, fmt.Errorf("etcd: checkpoint of job %s: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return ha.Checkpoint{}, false, nil
	}
	var c ha.Checkpoint
	if err := json.Unmarshal(resp.Kvs[0].Value, &c); err != nil {
		return ha.Checkpoint{}, false, fmt.Errorf("etcd: checkpoint of job %s: %w", id, err)
	}
	return c, true, nil
}

// RemoveJob removes job id's incarnation and its pointers.
func (s *Store) RemoveJob(ctx context.Context, epoch int64, id, incarnation string) error {
	g, err := s.fence(epoch)
	if err != nil {
		return fmt.Errorf("etcd: remove job %s: %w", id, err)
	}
	j, jobRev, err := s.job(ctx, id)
	if err != nil {
		return fmt.Errorf("etcd: remove: %w", err)
	}
	if j.Incarnation != incarnation {
		return fmt.Errorf("etcd: remove job %s incarnation %s: the job stored is incarnation %s: %w", id, incarnation, j.Incarnation, ha.ErrNotFound)
	}
	resp, err := s.cli.Txn(ctx).If(g, clientv3.Compare(clientv3.ModRevision(s.jobKey(id)), "=", jobRev)).Then(
		clientv3.OpDelete(s.jobKey(id)),
		clientv3.OpDelete(s.prefix+"checkpoints/"+id+"/", clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return fmt.Errorf("etcd: remove job %s: %w", id, err)
	}
	if !resp.Succeeded {
		if r, err := s.cli.Txn(ctx).If(g).Commit(); err == nil && !r.Succeeded {
			return fmt.Errorf("etcd: remove job %s at epoch %d: %w", id, epoch, ha.ErrFenced)
		}
		return fmt.Errorf("etcd: remove job %s: the job changed meanwhile", id)
	}
	return nil
}

// Close resigns and closes the client.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.ttl)*time.Second)
	defer cancel()
	err := s.Resign(ctx)
	if cerr := s.cli.Close(); err == nil {
		err = cerr
	}
	return err
}
