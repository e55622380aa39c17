package cli

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weirdata/weir/cluster/rest"
)

// restTokenEnv names the environment variable --rest-token defaults to.
const restTokenEnv = "WEIR_REST_TOKEN"

// restFlags are the flags of the commands that ask a JobManager through
// its REST API: weir list, cancel and stop.
type restFlags struct {
	jobManager string
	token      string
	timeout    time.Duration
}

// register adds --jobmanager (required), --rest-token and --timeout to
// cmd.
func (r *restFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	r.registerFlags(f)
	_ = cmd.MarkFlagRequired("jobmanager")
}

func (r *restFlags) registerFlags(f *pflag.FlagSet) {
	f.StringVar(&r.jobManager, "jobmanager", "", "REST address of the JobManager: http://host:port (host:port alone is taken as http)")
	f.StringVar(&r.token, "rest-token", "", "bearer token of the JobManager's REST API (default: $"+restTokenEnv+")")
	f.DurationVar(&r.timeout, "timeout", time.Minute, "how long to wait for the JobManager's answers, a savepoint's completion included")
}

// client returns a REST client of --jobmanager and a context of the
// command bounded by --timeout.
func (r *restFlags) client(cmd *cobra.Command) (*rest.Client, context.Context, context.CancelFunc) {
	token := r.token
	if token == "" {
		token = os.Getenv(restTokenEnv)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), r.timeout)
	c := rest.NewClient(r.jobManager, token)
	return c, ctx, func() {
		cancel()
		c.HTTP.CloseIdleConnections()
	}
}
