package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

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
	withNamespaceFile(t, filepath.Join(t.TempDir(), "none"))
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
	withNamespaceFile(t, file)
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

// withNamespaceFile points the service account's namespace file at file
// for the test.
func withNamespaceFile(t *testing.T, file string) {
	t.Helper()
	old := serviceAccountNamespace
	serviceAccountNamespace = file
	t.Cleanup(func() { serviceAccountNamespace = old })
}
