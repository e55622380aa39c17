//go:build kubernetes

package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// fakeKubernetes makes --ha kubernetes use a fake API server for the test
// and points the service account's namespace file at nsFile.
func fakeKubernetes(t *testing.T, nsFile string) client.Client {
	t.Helper()
	scheme, err := kubernetesScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	old := kubernetesClient
	kubernetesClient = func() (client.Client, error) { return c, nil }
	withNamespaceFile(t, nsFile)
	t.Cleanup(func() { kubernetesClient = old })
	return c
}

// TestHAKubernetesStore: --ha kubernetes opens a store on the API server
// whose leader holds the Lease weir-<cluster id>-leader in the pod's
// namespace for --ha-lease-ttl.
func TestHAKubernetesStore(t *testing.T) {
	file := filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(file, []byte("weir-prod"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := fakeKubernetes(t, file)
	s, err := haOf(t, "--ha", "kubernetes", "--ha-cluster-id", "prod", "--ha-lease-ttl", "7s").open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.Campaign(context.Background(), "10.0.0.5:6123")
	if err != nil {
		t.Fatal(err)
	}
	var lease coordinationv1.Lease
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "weir-prod", Name: "weir-prod-leader"}, &lease); err != nil {
		t.Fatalf("the leader's Lease: %v", err)
	}
	if d := lease.Spec.LeaseDurationSeconds; d == nil || *d != 7 || l.Epoch != 1 {
		t.Errorf("lease duration %v, epoch %d: want 7 s and epoch 1", d, l.Epoch)
	}
	leader, err := s.Leader(context.Background())
	if err != nil || leader.Address != "10.0.0.5:6123" {
		t.Errorf("leader %+v, %v: want the campaign's address", leader, err)
	}
}

// TestHAKubernetesClusterID: a cluster id the backend cannot name objects
// after is a usage error.
func TestHAKubernetesClusterID(t *testing.T) {
	fakeKubernetes(t, filepath.Join(t.TempDir(), "none"))
	s, err := haOf(t, "--ha", "kubernetes", "--ha-cluster-id", "Prod_1").open(context.Background())
	var ue *usageError
	if s != nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), `cluster id "Prod_1"`) {
		t.Errorf("store %v, error %v: want a usage error naming the cluster id", s, err)
	}
}
