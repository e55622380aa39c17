package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weirdata/weir/cluster/ha"
)

// Config says where the cluster's objects are and how leadership is held.
type Config struct {
	// Client reaches the API server (client.New of a rest.Config; a fake
	// client in tests).
	Client client.Client
	// Namespace holds the Lease and the ConfigMap.
	Namespace string
	// ClusterID names them: lowercase letters, digits and '-'.
	ClusterID string
	// Identity is this process's name as a holder (default: host name and
	// process id; a pod's name in Kubernetes).
	Identity string
	// LeaseDuration is how long a silent leader's Lease holds (default
	// 15 s, as client-go's).
	LeaseDuration time.Duration
	// RetryPeriod is the time between two tries to take or renew the
	// Lease (default LeaseDuration / 5).
	RetryPeriod time.Duration
}

// Store is an ha.Store on the Kubernetes API.
type Store struct {
	c        client.Client
	ns       string
	lease    string // the Lease's name
	cm       string // the ConfigMap's name
	id       string
	dur      time.Duration
	retry    time.Duration
	mu       sync.Mutex
	lead     *leadership
	observed observation
}

// observation is the Lease record as this store last saw it change, by its
// own clock.
type observation struct {
	rv string
	at time.Time
}

// leadership is a term of this store's process as leader.
type leadership struct {
	epoch    int64
	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	paused   bool // renewals stopped (tests: a paused process)
}

func (l *leadership) lose() { l.lostOnce.Do(func() { close(l.lost) }) }

var _ ha.Store = (*Store)(nil)

var (
	clusterRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$`)
	nameRe    = regexp.MustCompile(`^[-_a-zA-Z0-9]{1,100}$`)
)

// New returns the store of cfg's cluster. It makes no request.
func New(cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, errors.New("kubernetes: no client")
	}
	if cfg.Namespace == "" {
		return nil, errors.New("kubernetes: no namespace")
	}
	if !clusterRe.MatchString(cfg.ClusterID) {
		return nil, fmt.Errorf("kubernetes: cluster id %q: want lowercase letters, digits and '-'", cfg.ClusterID)
	}
	id := cfg.Identity
	if id == "" {
		host, _ := os.Hostname()
		id = host + "-" + strconv.Itoa(os.Getpid())
	}
	dur := cfg.LeaseDuration
	if dur <= 0 {
		dur = 15 * time.Second
	}
	retry := cfg.RetryPeriod
	if retry <= 0 {
		retry = dur / 5
	}
	return &Store{c: cfg.Client, ns: cfg.Namespace, lease: "weir-" + cfg.ClusterID + "-leader",
		cm: "weir-" + cfg.ClusterID + "-ha", id: id, dur: dur, retry: retry}, nil
}

func (s *Store) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: s.ns, Name: name}
}

// Campaign takes the Lease, waiting while another holder renews it.
func (s *Store) Campaign(ctx context.Context, address string) (*ha.Leadership, error) {
	s.mu.Lock()
	if s.lead != nil {
		s.mu.Unlock()
		return nil, errors.New("kubernetes: campaign: already leading")
	}
	s.mu.Unlock()
	for {
		epoch, err := s.tryAcquire(ctx, address)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: campaign: %w", err)
		}
		if epoch > 0 {
			if err := s.raiseEpoch(ctx, epoch); err != nil {
				return nil, fmt.Errorf("kubernetes: campaign: %w", err)
			}
			l := &leadership{epoch: epoch, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
			s.mu.Lock()
			s.lead = l
			s.mu.Unlock()
			go s.renew(l)
			return &ha.Leadership{Epoch: epoch, Address: address, Lost: l.lost}, nil
		}
		t := time.NewTimer(s.retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("kubernetes: campaign: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// expired says whether lease l, just read, is free for this store to take:
// no holder, or a record unchanged for its duration by this store's clock.
func (s *Store) expired(l *coordinationv1.Lease, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.ResourceVersion != s.observed.rv {
		s.observed = observation{rv: l.ResourceVersion, at: now}
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return true
	}
	d := s.dur
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return now.After(s.observed.at.Add(d))
}

// tryAcquire takes the Lease if it is free, returning the new epoch, or 0
// when another holder has it.
func (s *Store) tryAcquire(ctx context.Context, address string) (int64, error) {
	now := time.Now()
	secs := int32(max(s.dur/time.Second, 1))
	var l coordinationv1.Lease
	err := s.c.Get(ctx, s.key(s.lease), &l)
	if apierrors.IsNotFound(err) {
		one := int32(1)
		l = coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.lease, Annotations: map[string]string{addressAnnotation: address}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &s.id, LeaseDurationSeconds: &secs,
				AcquireTime: &metav1.MicroTime{Time: now}, RenewTime: &metav1.MicroTime{Time: now}, LeaseTransitions: &one},
		}
		if err := s.c.Create(ctx, &l); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return 0, nil
			}
			return 0, fmt.Errorf("create lease %s/%s: %w", s.ns, s.lease, err)
		}
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get lease %s/%s: %w", s.ns, s.lease, err)
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if holder != s.id && !s.expired(&l, now) {
		return 0, nil
	}
	var transitions int32
	if l.Spec.LeaseTransitions != nil {
		transitions = *l.Spec.LeaseTransitions
	}
	transitions++ // even when this store held it before: a new term
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[addressAnnotation] = address
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.LeaseTransitions = &s.id, &secs, &transitions
	l.Spec.AcquireTime, l.Spec.RenewTime = &metav1.MicroTime{Time: now}, &metav1.MicroTime{Time: now}
	if err := s.c.Update(ctx, &l); err != nil {
		if apierrors.IsConflict(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("update lease %s/%s: %w", s.ns, s.lease, err)
	}
	return int64(transitions), nil
}

const addressAnnotation = "weir.io/address"

// raiseEpoch sets the ConfigMap's epoch to epoch, creating the ConfigMap
// if needed. A larger epoch there means a newer leader: this one is stale.
func (s *Store) raiseEpoch(ctx context.Context, epoch int64) error {
	for {
		var cm corev1.ConfigMap
		err := s.c.Get(ctx, s.key(s.cm), &cm)
		if apierrors.IsNotFound(err) {
			cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.cm},
				Data: map[string]string{epochKey: strconv.FormatInt(epoch, 10)}}
			if err := s.c.Create(ctx, &cm); err == nil {
				return nil
			} else if !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create configmap %s/%s: %w", s.ns, s.cm, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("get configmap %s/%s: %w", s.ns, s.cm, err)
		}
		if cur := storedEpoch(&cm); cur > epoch {
			return fmt.Errorf("epoch %d: the configmap has epoch %d already: %w", epoch, cur, ha.ErrFenced)
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[epochKey] = strconv.FormatInt(epoch, 10)
		err = s.c.Update(ctx, &cm)
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("update configmap %s/%s: %w", s.ns, s.cm, err)
		}
	}
}

const epochKey = "epoch"

func storedEpoch(cm *corev1.ConfigMap) int64 {
	e, _ := strconv.ParseInt(cm.Data[epochKey], 10, 64)
	return e
}

// renew keeps l's Lease renewed every retry period until it is stopped or
// lost.
func (s *Store) renew(l *leadership) {
	defer close(l.done)
	last := time.Now()
	t := time.NewTicker(s.retry)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.retry)
		ok, held := s.renewOnce(ctx, l)
		cancel()
		switch {
		case !held:
			l.lose()
			return
		case ok:
			last = time.Now()
		case time.Since(last) > s.dur*2/3:
			l.lose() // renewals failed too long: another may take it
			return
		}
	}
}

// renewOnce renews the Lease; held is false once another holds it.
func (s *Store) renewOnce(ctx context.Context, l *leadership) (ok, held bool) {
	var lease coordinationv1.Lease
	if err := s.c.Get(ctx, s.key(s.lease), &lease); err != nil {
		return false, !apierrors.IsNotFound(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != s.id ||
		lease.Spec.LeaseTransitions == nil || int64(*lease.Spec.LeaseTransitions) != l.epoch {
		return false, false
	}
	s.mu.Lock()
	paused := l.paused
	s.mu.Unlock()
	if paused {
		return false, true
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	return s.c.Update(ctx, &lease) == nil, true
}

// Resign gives up the Lease, so that a standby takes it at once.
func (s *Store) Resign(ctx context.Context) error {
	s.mu.Lock()
	l := s.lead
	s.lead = nil
	s.mu.Unlock()
	if l == nil {
		return nil
	}
	close(l.stop)
	<-l.done
	l.lose()
	var lease coordinationv1.Lease
	if err := s.c.Get(ctx, s.key(s.lease), &lease); err != nil {
		return fmt.Errorf("kubernetes: resign: %w", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != s.id {
		return nil
	}
	empty := ""
	lease.Spec.HolderIdentity = &empty
	if err := s.c.Update(ctx, &lease); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("kubernetes: resign: %w", err)
	}
	return nil
}

// Leader returns the Lease's holder while its renewals are recent.
func (s *Store) Leader(ctx context.Context) (ha.Leader, error) {
	var l coordinationv1.Lease
	err := s.c.Get(ctx, s.key(s.lease), &l)
	if apierrors.IsNotFound(err) {
		return ha.Leader{}, ha.ErrNoLeader
	}
	if err != nil {
		return ha.Leader{}, fmt.Errorf("kubernetes: leader: %w", err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil || l.Spec.LeaseTransitions == nil {
		return ha.Leader{}, ha.ErrNoLeader
	}
	d := s.dur
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if time.Now().After(l.Spec.RenewTime.Add(d)) {
		return ha.Leader{}, ha.ErrNoLeader
	}
	return ha.Leader{Address: l.Annotations[addressAnnotation], Epoch: int64(*l.Spec.LeaseTransitions)}, nil
}

// WatchLeader polls the Lease every retry period and sends each change.
func (s *Store) WatchLeader(ctx context.Context) <-chan ha.Leader {
	ch := make(chan ha.Leader, 1)
	go func() {
		defer close(ch)
		var last ha.Leader
		first := true
		t := time.NewTicker(s.retry)
		defer t.Stop()
		for {
			cur, err := s.Leader(ctx)
			if err == nil || errors.Is(err, ha.ErrNoLeader) {
				if first || cur != last {
					select {
					case ch <- cur:
					case <-ctx.Done():
						return
					}
					first, last = false, cur
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ch
}

// update applies fn to the ConfigMap's data as a write of epoch: refused
// unless this store leads at epoch and the ConfigMap carries it, and
// retried when the ConfigMap changed between the read and the write.
func (s *Store) update(ctx context.Context, epoch int64, fn func(data map[string]string) error) error {
	s.mu.Lock()
	l := s.lead
	s.mu.Unlock()
	if l == nil || l.epoch != epoch {
		return ha.ErrFenced
	}
	select {
	case <-l.lost:
		return ha.ErrFenced
	default:
	}
	for {
		var cm corev1.ConfigMap
		err := s.c.Get(ctx, s.key(s.cm), &cm)
		if apierrors.IsNotFound(err) {
			return ha.ErrFenced // the leader made it when it took the Lease
		}
		if err != nil {
			return err
		}
		if storedEpoch(&cm) != epoch {
			return ha.ErrFenced
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		if err := fn(cm.Data); err != nil {
			return err
		}
		err = s.c.Update(ctx, &cm)
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func jobKey(id string) string { return "job." + id }

func checkpointKey(id, incarnation string) string { return "checkpoint." + id + "." + incarnation }

// PutJob writes j, fenced by epoch.
func (s *Store) PutJob(ctx context.Context, epoch int64, j ha.Job) error {
	if !nameRe.MatchString(j.ID) || !nameRe.MatchString(j.Incarnation) {
		return fmt.Errorf("kubernetes: put job: id %q, incarnation %q: want letters, digits, '-' and '_'", j.ID, j.Incarnation)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("kubernetes: put job %s: %w", j.ID, err)
	}
	err = s.update(ctx, epoch, func(data map[string]string) error {
		data[jobKey(j.ID)] = string(b)
		return nil
	})
	if err != nil {
		return fmt.Errorf("kubernetes: put job %s at epoch %d: %w", j.ID, epoch, err)
	}
	return nil
}

// data returns the ConfigMap's data, empty when there is none yet.
func (s *Store) data(ctx context.Context) (map[string]string, error) {
	var cm corev1.ConfigMap
	err := s.c.Get(ctx, s.key(s.cm), &cm)
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return cm.Data, nil
}

// Jobs returns the jobs stored, by id.
func (s *Store) Jobs(ctx context.Context) ([]ha.Job, error) {
	data, err := s.data(ctx)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: jobs: %w", err)
	}
	var keys []string
	for k := range data {
		if strings.HasPrefix(k, "job.") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	jobs := make([]ha.Job, 0, len(keys))
	for _, k := range keys {
		var j ha.Job
		if err := json.Unmarshal([]byte(data[k]), &j); err != nil {
			return nil, fmt.Errorf("kubernetes: %s: %w", k, err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// storedJob checks that data holds job id with incarnation.
func storedJob(data map[string]string, id, incarnation string) error {
	raw, ok := data[jobKey(id)]
	if !ok {
		return fmt.Errorf("job %s: %w", id, ha.ErrNotFound)
	}
	var j ha.Job
	if err := json.Unmarshal([]byte(raw), &j); err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	if j.Incarnation != incarnation {
		return fmt.Errorf("job %s incarnation %s: the job stored is incarnation %s: %w", id, incarnation, j.Incarnation, ha.ErrNotFound)
	}
	return nil
}

// SetCheckpoint sets the pointer of job id's incarnation to c.
func (s *Store) SetCheckpoint(ctx context.Context, epoch int64, id, incarnation string, c ha.Checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	err = s.update(ctx, epoch, func(data map[string]string) error {
		if err := storedJob(data, id, incarnation); err != nil {
			return err
		}
		if raw, ok := data[checkpointKey(id, incarnation)]; ok {
			var old ha.Checkpoint
			if err := json.Unmarshal([]byte(raw), &old); err != nil {
				return err
			}
			if c.ID <= old.ID {
				return fmt.Errorf("checkpoint %d is stored already", old.ID)
			}
		}
		data[checkpointKey(id, incarnation)] = string(b)
		return nil
	})
	if err != nil {
		return fmt.Errorf("kubernetes: set checkpoint of job %s to %d: %w", id, c.ID, err)
	}
	return nil
}

// LatestCheckpoint returns the pointer of job id's incarnation.
func (s *Store) LatestCheckpoint(ctx context.Context, id, incarnation string) (ha.Checkpoint, bool, error) {
	data, err := s.data(ctx)
	if err != nil {
		return ha.Checkpoint{}, false, fmt.Errorf("kubernetes: checkpoint of job %s: %w", id, err)
	}
	raw, ok := data[checkpointKey(id, incarnation)]
	if !ok {
		return ha.Checkpoint{}, false, nil
	}
	var c ha.Checkpoint
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return ha.Checkpoint{}, false, fmt.Errorf("kubernetes: checkpoint of job %s: %w", id, err)
	}
	return c, true, nil
}

// RemoveJob removes job id's incarnation and its pointers.
func (s *Store) RemoveJob(ctx context.Context, epoch int64, id, incarnation string) error {
	err := s.update(ctx, epoch, func(data map[string]string) error {
		if err := storedJob(data, id, incarnation); err != nil {
			return err
		}
		delete(data, jobKey(id))
		for k := range data {
			if strings.HasPrefix(k, "checkpoint."+id+".") {
				delete(data, k)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("kubernetes: remove job %s: %w", id, err)
	}
	return nil
}

// Close resigns.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.dur)
	defer cancel()
	return s.Resign(ctx)
}
