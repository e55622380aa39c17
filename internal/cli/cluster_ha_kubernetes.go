package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/weirdata/weir/cluster/ha"
)

// serviceAccountNamespace is the file of a pod's namespace.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

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
// that a failure is a nil interface). The Kubernetes backend is in builds
// with the tag kubernetes only (cluster_kubernetes.go), as the Dockerfile
// builds the image: client-go is a third of the binary of a build without
// it.
func (h *haFlags) openKubernetes() (ha.Store, error) {
	if h.endpoints != "" {
		return nil, &usageError{err: errors.New("--ha-etcd-endpoints is for --ha etcd")}
	}
	if h.leaseTTL < time.Second || h.leaseTTL%time.Second != 0 {
		return nil, &usageError{err: fmt.Errorf("--ha kubernetes: --ha-lease-ttl must be whole seconds, at least 1s, got %v", h.leaseTTL)}
	}
	return kubernetesStore(h.kubernetesNamespace(), h.clusterID, h.leaseTTL)
}
