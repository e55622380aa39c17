//go:build kubernetes

package cli

import (
	"fmt"
	"os"
	"path/filepath"
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

// kubernetesStore opens the store in namespace ns on the API server.
func kubernetesStore(ns, clusterID string, ttl time.Duration) (ha.Store, error) {
	c, err := kubernetesClient()
	if err != nil {
		return nil, fmt.Errorf("--ha kubernetes: %w", err)
	}
	s, err := kubernetes.New(kubernetes.Config{Client: c, Namespace: ns, ClusterID: clusterID, LeaseDuration: ttl})
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("--ha kubernetes: %w", err)}
	}
	return s, nil
}
