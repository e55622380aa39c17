package kubernetes

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/ha/hatest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend opens stores on one fake API server (controller-runtime's fake
// client, which refuses an update of a stale resourceVersion), with a
// one-second lease.
func backend(c client.Client) hatest.Backend {
	n := 0
	return hatest.Backend{
		Open: func(t *testing.T, cluster string) ha.Store {
			n++
			s, err := New(Config{Client: c, Namespace: "weir", ClusterID: cluster, Identity: "jm-" + string(rune('a'+n)),
				LeaseDuration: time.Second, RetryPeriod: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		Pause: func(s ha.Store) {
			st := s.(*Store)
			st.mu.Lock()
			st.lead.paused = true
			st.mu.Unlock()
		},
		LeaseWait: 10 * time.Second,
	}
}

func fakeClient() client.WithWatch {
	return fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
}

// TestElection: hatest.Election on the Kubernetes API: the paused leader
// stops renewing its Lease.
func TestElection(t *testing.T) { hatest.Election(t, backend(fakeClient())) }

// TestJobs: hatest.Jobs on the Kubernetes API.
func TestJobs(t *testing.T) { hatest.Jobs(t, backend(fakeClient())) }

// TestWriteRetriesOnConflict: a write whose ConfigMap changed between its
// read and its update (another field written meanwhile) is retried on the
// new version and keeps both changes.
func TestWriteRetriesOnConflict(t *testing.T) {
	base := fakeClient()
	var injected atomic.Bool
	c := interceptor.NewClient(base, interceptor.Funcs{
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Data["job."+strings.Repeat("1", 32)] != "" && injected.CompareAndSwap(false, true) {
				// another write lands first
				var cur corev1.ConfigMap
				if err := cl.Get(ctx, client.ObjectKeyFromObject(cm), &cur); err != nil {
					return err
				}
				cur.Data["other"] = "x"
				if err := cl.Update(ctx, &cur); err != nil {
					return err
				}
			}
			return cl.Update(ctx, obj, opts...)
		},
	})
	s, err := New(Config{Client: c, Namespace: "weir", ClusterID: "c", Identity: "jm", LeaseDuration: time.Second, RetryPeriod: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	l, err := s.Campaign(ctx, "jm:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, l.Epoch, ha.Job{ID: strings.Repeat("1", 32), Incarnation: "i", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if !injected.Load() {
		t.Fatal("the conflicting write was not injected")
	}
	var cm corev1.ConfigMap
	if err := base.Get(ctx, client.ObjectKey{Namespace: "weir", Name: "weir-c-ha"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["other"] != "x" || cm.Data["job."+strings.Repeat("1", 32)] == "" {
		t.Fatalf("after the retried write the data is %v", cm.Data)
	}
}

// TestConfig: bad cluster ids and missing settings are refused.
func TestConfig(t *testing.T) {
	c := fakeClient()
	for _, cfg := range []Config{
		{Client: c, Namespace: "n", ClusterID: "Prod"},
		{Client: c, Namespace: "n", ClusterID: "a/b"},
		{Client: c, ClusterID: "a"},
		{Namespace: "n", ClusterID: "a"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	s, err := New(Config{Client: c, Namespace: "n", ClusterID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Leader(context.Background()); !errors.Is(err, ha.ErrNoLeader) {
		t.Fatalf("Leader of a new cluster: %v", err)
	}
}

// TestFencedByConfigMapEpoch: a leader that has not yet noticed it lost
// the Lease (its renewal has not run since: a paused process) is fenced by
// the ConfigMap's epoch alone, once a newer leader raised it.
func TestFencedByConfigMapEpoch(t *testing.T) {
	c := fakeClient()
	ctx := context.Background()
	a, err := New(Config{Client: c, Namespace: "weir", ClusterID: "c", Identity: "a", LeaseDuration: time.Second, RetryPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	la, err := a.Campaign(ctx, "a:1")
	if err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("2", 32)
	if err := a.PutJob(ctx, la.Epoch, ha.Job{ID: id, Incarnation: "i", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	// b takes over as its campaign would once a's Lease ran out.
	b, err := New(Config{Client: c, Namespace: "weir", ClusterID: "c", Identity: "b", LeaseDuration: time.Second, RetryPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.raiseEpoch(ctx, la.Epoch+1); err != nil {
		t.Fatal(err)
	}
	if err := a.SetCheckpoint(ctx, la.Epoch, id, "i", ha.Checkpoint{ID: 1}); !errors.Is(err, ha.ErrFenced) {
		t.Fatalf("the old leader's write after the epoch rose: %v", err)
	}
	select {
	case <-la.Lost:
		t.Fatal("a noticed; the test wants it unaware")
	default:
	}
	if err := a.raiseEpoch(ctx, la.Epoch); !errors.Is(err, ha.ErrFenced) {
		t.Fatalf("lowering the epoch: %v", err)
	}
}
