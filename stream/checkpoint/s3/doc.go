// Package s3 keeps a stream job's checkpoints and savepoints in S3 or any
// S3-compatible object store (MinIO, Ceph, R2, GCS's interoperability
// API), through github.com/minio/minio-go/v7.
//
// # Model
//
// Open returns a checkpoint.Bucket for one bucket; checkpoint.OpenBucket
// puts a job's checkpoint storage under a prefix of it, with the layout,
// metadata and contracts of a checkpoint directory. A URL
// s3://bucket/prefix names the place (ParseURL); the CLI's
// --checkpoint-dir and --savepoint-dir take one.
//
// # Contracts
//
//   - Every object is put whole under a key no other attempt writes; a
//     checkpoint is complete once its _metadata object is there.
//   - A request is not retried: a failed put fails the checkpoint, whose
//     failure the job reports and counts against its tolerable failures.
//   - Each request but a read's body ends within Config.Timeout; an
//     unreachable endpoint is an error naming it.
//   - Credentials and the endpoint come from Config, or from the AWS
//     environment variables (ConfigFromEnv).
package s3
