//go:build !kubernetes

package cli

import (
	"errors"
	"time"

	"github.com/weirdata/weir/cluster/ha"
)

// errNoKubernetes is --ha kubernetes in a build without the backend.
var errNoKubernetes = errors.New("--ha kubernetes: this weir binary was built without the Kubernetes backend; build it with go build -tags kubernetes ./cmd/weir (the Dockerfile's image has it), or use --ha etcd")

func kubernetesStore(string, string, time.Duration) (ha.Store, error) {
	return nil, errNoKubernetes
}
