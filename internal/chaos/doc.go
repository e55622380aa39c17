// Package chaos holds the kill -9 tests of weir's checkpoints: stream jobs
// run as `weir run` processes, killed with SIGKILL at random moments and
// restarted with the same command, or stopped with a savepoint and resumed
// at another parallelism, must commit exactly the output of an
// uninterrupted run. The tests build cmd/weir once and skip under -short;
// scripts/chaos.sh runs the same kill loop from a shell.
package chaos
