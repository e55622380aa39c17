package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weirdata/weir/cluster/ha"
	"github.com/weirdata/weir/cluster/ha/kubernetes"
)

// serviceAccountNamespace is the file of a pod's namespace.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// kubernetesClient returns a client of the API server: $KUBECONFIG's
// current context when it is set, else the pod's service account. Tests
// replace it.
var kubernetesClient = func() (client.Client, error) {
	cfg, err := kubernetesConfig()
	if err != nil {
		return nil, err
	}
	scheme, err := kubernetesScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// kubernetesScheme holds the types the store reads and writes: Leases and
// ConfigMaps.
func kubernetesScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

func kubernetesConfig() (*rest.Config, error) {
	if p := os.Getenv("KUBECONFIG"); p != "" {
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(p)}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("$KUBECONFIG: %w", err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("no $KUBECONFIG, and not in a pod: %w", err)
	}
	return cfg, nil
}

// kubernetesNamespace returns --ha-kubernetes-namespace, else the pod's
// namespace from its service account, else "default".
func (h *haFlags) kubernetesNamespace() string {
	if h.namespace != "" {
		return h.namespace
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return "default"
}

// openKubernetes returns the store of --ha kubernetes (an ha.Store, so
// that a failure is a nil interface).
func (h *haFlags) openKubernetes() (ha.Store, error) {
	if h.endpoints != "" {
		return nil, &usageError{err: errors.New("--ha-etcd-endpoints is for --ha etcd")}
	}
	if h.leaseTTL < time.Second || h.leaseTTL%time.Second != 0 {
		return nil, &usageError{err: fmt.Errorf("--ha kubernetes: --ha-lease-ttl must be whole seconds, at least 1s, got %v", h.leaseTTL)}
	}
	ns := h.kubernetesNamespace()
	c, err := kubernetesClient()
	if err != nil {
		return nil, fmt.Errorf("--ha kubernetes: %w", err)
	}
	s, err := kubernetes.New(kubernetes.Config{Client: c, Namespace: ns, ClusterID: h.clusterID, LeaseDuration: h.leaseTTL})
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("--ha kubernetes: %w", err)}
	}
	return s, nil
}
