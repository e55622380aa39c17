// Package chaos holds the kill -9 tests of weir's checkpoints: stream jobs
// run as `weir run` processes, killed with SIGKILL at random moments and
// restarted with the same command, or stopped with a savepoint and resumed
// at another parallelism, must commit exactly the output of an
// uninterrupted run, with the checkpoints in a directory or in S3 (an
// in-process S3 server the processes reach over HTTP). The tests build
// cmd/weir once and skip under -short. The Kafka end to end test runs
// weir nexmark q7 and q5 from a 4-partition topic of an in-process broker
// in the test process into another topic with the exactly-once sink,
// killed and restarted alike: a read_committed consumer sees exactly the
// oracle's rows.
// Each job and configuration is killed WEIR_CHAOS_KILLS times (6 by
// default; WEIR_CHAOS_KILLS=20 is the full loop). scripts/chaos.sh runs
// the same kill loop from a shell.
package chaos
