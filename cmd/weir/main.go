// Command weir is the command line of the weir dataflow engine; see internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/weirdata/weir/internal/cli"
)

func main() {
	os.Exit(run())
}

// run executes the command line with a context cancelled on Ctrl-C, and on
// SIGTERM unless the command stops with a savepoint then (cli.Terminator),
// so that jobs clean up (deferred) before main exits.
func run() int {
	ctx, term := cli.WithTerminator(context.Background())
	defer term.Interrupt()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				term.Terminate()
			} else {
				term.Interrupt()
			}
		}
	}()
	return cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
}
