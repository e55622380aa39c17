package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

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
	oldClient, oldNS := kubernetesClient, serviceAccountNamespace
	kubernetesClient = func() (client.Client, error) { return c, nil }
	serviceAccountNamespace = nsFile
	t.Cleanup(func() { kubernetesClient, serviceAccountNamespace = oldClient, oldNS })
	return c
}

// haOf parses args into the HA flags of weir jobmanager.
func haOf(t *testing.T, args ...string) *haFlags {
	t.Helper()
	var fresh haFlags
	fs := pflag.NewFlagSet("ha", pflag.ContinueOnError)
	fresh.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &fresh
}

// TestHAFlagsRefused: wrong combinations of the HA flags are usage errors
// that name the flag, before any request.
func TestHAFlagsRefused(t *testing.T) {
	fakeKubernetes(t, filepath.Join(t.TempDir(), "none"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ha", "zookeeper"}, "--ha must be none, etcd or kubernetes"},
		{[]string{"--ha", "etcd"}, "--ha etcd needs --ha-etcd-endpoints"},
		{[]string{"--ha", "etcd", "--ha-etcd-endpoints", "http://e:2379", "--ha-kubernetes-namespace", "x"}, "--ha-kubernetes-namespace is for --ha kubernetes"},
		{[]string{"--ha", "kubernetes", "--ha-etcd-endpoints", "http://e:2379"}, "--ha-etcd-endpoints is for --ha etcd"},
		{[]string{"--ha", "kubernetes", "--ha-lease-ttl", "1500ms"}, "--ha-lease-ttl must be whole seconds"},
		{[]string{"--ha", "kubernetes", "--ha-lease-ttl", "0s"}, "--ha-lease-ttl must be whole seconds"},
		{[]string{"--ha", "kubernetes", "--ha-cluster-id", "Prod_1"}, `cluster id "Prod_1"`},
	} {
		s, err := haOf(t, tc.args...).open(context.Background())
		var ue *usageError
		if s != nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: store %v, error %v: want a usage error with %q", tc.args, s, err, tc.want)
		}
	}
}

// TestHAKubernetesNamespace: the flag, else the service account's file,
// else "default".
func TestHAKubernetesNamespace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "namespace")
	fakeKubernetes(t, file)
	if got := haOf(t, "--ha", "kubernetes").kubernetesNamespace(); got != "default" {
		t.Errorf("without flag or file: %q, want default", got)
	}
	if err := os.WriteFile(file, []byte("weir-prod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := haOf(t, "--ha", "kubernetes").kubernetesNamespace(); got != "weir-prod" {
		t.Errorf("from the service account: %q, want weir-prod", got)
	}
	if got := haOf(t, "--ha", "kubernetes", "--ha-kubernetes-namespace", "other").kubernetesNamespace(); got != "other" {
		t.Errorf("with the flag: %q, want other", got)
	}
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
