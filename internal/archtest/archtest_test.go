package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/weirdata/weir"

// imports returns, per package directory (relative to the module root), the import
// paths of its non-test files.
func imports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[rel][p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// publicAPI allows what a user's program may import: the standard library, the
// DataSet API (with its aggregate functions) and the formats. dataset names the types of optimizer, flow and
// spill that its Options and Result hand over, so no program needs those.
func publicAPI(p string) bool {
	return isStd(p) || p == module+"/dataset" || p == module+"/dataset/agg" || p == module+"/formats" || strings.HasPrefix(p, module+"/formats/")
}

// tpchQueries is publicAPI plus what the TPC-H queries share.
func tpchQueries(p string) bool { return publicAPI(p) || p == module+"/tpch/internal/query" }

// jobAPI is publicAPI plus internal/lines, the runner the example and
// iteration jobs share.
func jobAPI(p string) bool { return publicAPI(p) || p == module+"/internal/lines" }

// graphAPI allows what the graph package builds on: the DataSet API (its
// Gather hands over the job's resources) and the memory and spill packages
// its adjacency is reserved from and spilled to.
func graphAPI(p string) bool {
	return isStd(p) || p == module+"/dataset" || p == module+"/memory" || p == module+"/spill"
}

// streamAPI allows what the stream package builds on: the runtime, memory,
// resource, spill, the kernels, the formats and the stream packages.
func streamAPI(p string) bool {
	switch p {
	case module + "/flow", module + "/memory", module + "/resource", module + "/spill", module + "/sortjoin",
		module + "/internal/typed", module + "/internal/callsite", module + "/formats", module + "/stream", module + "/clock", module + "/metrics":
		return true
	}
	return isStd(p) || strings.HasPrefix(p, module+"/stream/") || strings.HasPrefix(p, module+"/formats/")
}

// in allows the standard library, the leaves clock and metrics, and the
// given packages of the module.
func in(pkgs ...string) func(string) bool {
	return func(p string) bool {
		if isStd(p) || p == module+"/clock" || p == module+"/metrics" {
			return true
		}
		for _, q := range pkgs {
			if p == module+"/"+q {
				return true
			}
		}
		return false
	}
}

func isStd(p string) bool { return !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") }

func TestDependencyRules(t *testing.T) {
	pkgs := imports(t)
	for _, p := range []string{"memory", "metrics", "resource", "graph", "sortjoin", "flow", "stream/source", "stream/watermark", "stream/sink", "stream/window", "stream/checkpoint", "stream"} {
		if len(pkgs[p]) == 0 {
			t.Fatalf("did not find the %s package (found %d packages)", p, len(pkgs))
		}
	}
	allowed := map[string]func(string) bool{
		// memory, spill and clock are leaves; metrics is a leaf above clock.
		"memory":  isStd,
		"clock":   isStd,
		"metrics": func(p string) bool { return isStd(p) || p == module+"/clock" },
		"spill": func(p string) bool {
			return isStd(p) || strings.HasPrefix(p, "github.com/klauspost/compress")
		},
		// resource is a leaf above memory and spill: the bundle flow and
		// sortjoin share.
		"resource": func(p string) bool {
			return isStd(p) || p == module+"/memory" || p == module+"/spill"
		},
		"sortjoin": func(p string) bool {
			return isStd(p) || p == module+"/memory" || p == module+"/spill" || p == module+"/resource"
		},
		// the typed kernels: Go values over the binary kernels, never the API or the runtime
		"internal/typed": func(p string) bool {
			return isStd(p) || p == module+"/memory" || p == module+"/spill" || p == module+"/sortjoin" || p == module+"/resource"
		},
		"cmd/weir": func(p string) bool { return isStd(p) || p == module+"/internal/cli" },
		// the runtime executes what it is given: no API, formats or planning in it.
		"flow": func(p string) bool {
			return isStd(p) || p == module+"/memory" || p == module+"/spill" || p == module+"/resource" || p == module+"/clock" ||
				p == module+"/metrics" || p == module+"/internal/ring"
		},
		// the queue of channel indexes the inboxes keep: a leaf
		"internal/ring": isStd,
		"internal/wire": isStd,
		"formats":       isStd,
		// what tests of sources and sinks share
		"formats/formatstest": func(p string) bool { return isStd(p) || p == module+"/formats" },
		// keyed state, key groups and timers: a leaf above memory, under the
		// stream operators
		"stream/state": func(p string) bool { return isStd(p) || p == module+"/memory" || p == module+"/internal/wire" },
		// the disk backend's store: Pebble under the state package's Store
		"stream/state/disk": func(p string) bool {
			return isStd(p) || p == module+"/memory" || p == module+"/stream/state" || p == "github.com/cockroachdb/pebble/v2" || strings.HasPrefix(p, "github.com/cockroachdb/pebble/v2/")
		},
		// the watermark generators are a leaf: the stream runtime drives them
		"stream/watermark": func(p string) bool { return isStd(p) || p == module+"/clock" },
		// checkpoint storage keeps the runtime's snapshot bytes unread
		"stream/checkpoint": func(p string) bool { return isStd(p) || p == module+"/internal/wire" },
		// the contract of high availability, and its etcd backend
		"cluster/ha": isStd,
		// the contract tests every backend passes
		"cluster/ha/hatest": func(p string) bool { return isStd(p) || p == module+"/cluster/ha" },
		// the Kubernetes backend: client-go's types through controller-runtime's client
		"cluster/ha/kubernetes": func(p string) bool {
			return isStd(p) || p == module+"/cluster/ha" || strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/controller-runtime/")
		},
		// the data plane between processes: gRPC only, nothing of weir, so
		// the runtime plugs it in without the transport knowing the runtime
		"cluster/shuffle": func(p string) bool {
			return isStd(p) || p == module+"/internal/ring" || p == "google.golang.org/grpc" || strings.HasPrefix(p, "google.golang.org/grpc/")
		},
		// a spread attempt's share to its DataSet or DataStream program: the
		// one package that knows the cluster's Spread, the data plane and
		// the two APIs
		"cluster/spread": func(p string) bool {
			switch p {
			case module + "/cluster", module + "/cluster/dataplane", module + "/dataset", module + "/stream":
				return true
			}
			return isStd(p)
		},
		// test peers: the shuffle over gRPC, nothing else
		"cluster/shuffle/shuffletest": func(p string) bool {
			return isStd(p) || p == module+"/cluster/shuffle" || p == "google.golang.org/grpc" || strings.HasPrefix(p, "google.golang.org/grpc/")
		},
		// flow's channels between processes over the shuffle: the one
		// package that knows both
		"cluster/dataplane": func(p string) bool {
			return isStd(p) || p == module+"/flow" || p == module+"/cluster/shuffle"
		},
		// the REST API: net/http over the Cluster a JobManager implements,
		// and the fake Cluster its tests and the CLI's serve
		"cluster/rest":          isStd,
		"cluster/rest/resttest": func(p string) bool { return isStd(p) || p == module+"/cluster/rest" },
		// the REST API over this process's stream jobs (weir run --web-ui)
		"cluster/local": func(p string) bool {
			return isStd(p) || p == module+"/cluster/rest" || p == module+"/cluster/view" || p == module+"/stream" || p == module+"/stream/watermark"
		},
		// stream jobs as the REST API and the metrics show them: the
		// attempts' reports and a JobManager's answers filled with them
		"cluster/view": func(p string) bool {
			switch p {
			case module + "/cluster", module + "/cluster/rest", module + "/metrics/prometheus", module + "/stream", module + "/stream/watermark":
				return true
			}
			return isStd(p)
		},
		// what the web UI's tests share: requests, metrics, headless Chromium
		"internal/webtest": isStd,
		// the web UI: the REST handler, the exporter and an embedded page
		"web": func(p string) bool {
			return isStd(p) || p == module+"/cluster/rest" || p == module+"/metrics/prometheus"
		},
		"cluster/ha/etcd": func(p string) bool {
			return isStd(p) || p == module+"/cluster/ha" || strings.HasPrefix(p, "go.etcd.io/etcd/client/v3") || p == "go.uber.org/zap"
		},
		// the S3 bucket of checkpoint storage: minio-go under checkpoint.Bucket
		"stream/checkpoint/s3": func(p string) bool {
			return isStd(p) || p == module+"/stream/checkpoint" || p == "github.com/minio/minio-go/v7" || strings.HasPrefix(p, "github.com/minio/minio-go/v7/")
		},
		// windows, assigners, triggers and evictors: plain Go over
		// memory.Codec (per-window trigger state), driven by the stream
		// runtime's window operator
		"stream/window": func(p string) bool { return isStd(p) || p == module+"/memory" },
		// the Prometheus exporter: reads stream jobs, serves client_golang's format
		"metrics/prometheus": func(p string) bool {
			return isStd(p) || p == module+"/metrics" || p == module+"/stream" || p == module+"/stream/watermark" ||
				strings.HasPrefix(p, "github.com/prometheus/client_golang/")
		},
		// the aggregate functions: plain Go, a leaf under the API
		"dataset/agg": isStd,
		// where user code called an API function: a leaf under both APIs
		"internal/callsite": isStd,
		// programs on the public API: no runtime, no kernels
		"tpch": func(p string) bool { return publicAPI(p) || strings.HasPrefix(p, module+"/tpch/internal/") },
		// the queries, a few per package, and what they share
		"tpch/internal/query":   publicAPI,
		"tpch/internal/q1to6":   tpchQueries,
		"tpch/internal/q7to11":  tpchQueries,
		"tpch/internal/q12to17": tpchQueries,
		"tpch/internal/q18to22": tpchQueries,
		"examples":              jobAPI,
		"examples/linesort":     publicAPI,
		"iterate": func(p string) bool {
			return jobAPI(p) || p == module+"/graph" || p == module+"/iterate/internal/clusteredparquet"
		},
		// k-means' Parquet rows, one type per dimension, compiled apart
		"iterate/internal/clusteredparquet": jobAPI,
		// the graph iterations: a library on the DataSet API
		"graph":          graphAPI,
		"internal/lines": publicAPI,
		// the streaming examples: programs on the DataStream API
		"examples/streaming": func(p string) bool {
			return isStd(p) || p == module+"/stream" || strings.HasPrefix(p, module+"/stream/") || p == module+"/metrics" ||
				p == module+"/formats" || strings.HasPrefix(p, module+"/formats/")
		},
		// the Nexmark suite: a program on the DataStream API, and its
		// oracle on the suite's event types alone
		"nexmark": func(p string) bool {
			return isStd(p) || p == module+"/clock" || p == module+"/stream" || strings.HasPrefix(p, module+"/stream/") ||
				p == module+"/formats" || strings.HasPrefix(p, module+"/formats/")
		},
		"nexmark/nexmarktest": func(p string) bool { return isStd(p) || p == module+"/nexmark" },
		// the CLI runs programs through dataset: plans, progress and spill
		// settings by dataset's names
		"internal/cli": func(p string) bool {
			return p != module+"/flow" && p != module+"/optimizer" && p != module+"/spill" && p != module+"/sortjoin"
		},
		// the stream sources: splits, positions and readers over the formats;
		// no runtime, no API
		"stream/source": func(p string) bool {
			return isStd(p) || p == module+"/clock" || p == module+"/metrics" || p == module+"/formats" || strings.HasPrefix(p, module+"/formats/")
		},
		// the stream sinks: print, collect and part files over the formats;
		// no runtime, no API (a writer's metric group is a leaf's)
		"stream/sink": func(p string) bool {
			return isStd(p) || p == module+"/clock" || p == module+"/metrics" || p == module+"/formats" || strings.HasPrefix(p, module+"/formats/")
		},
		// the DataStream API and its runtime: the engine's layers and the
		// stream packages, never the DataSet API, the optimizer or the CLI
		"stream": streamAPI,
		// the stream runtime's layers, each above the ones it names:
		// core < protocol; task < op; coordinator; graph < runner < stream
		"stream/internal/core":     in("flow", "memory", "stream/watermark"),
		"stream/internal/protocol": isStd,
		"stream/internal/task": in("flow", "memory", "resource", "spill", "stream/internal/core", "stream/internal/protocol",
			"stream/state", "stream/source", "stream/watermark"),
		"stream/internal/op": in("memory", "spill", "sortjoin", "resource", "stream/internal/core", "stream/internal/task", "stream/watermark",
			"stream/state", "stream/state/disk", "stream/window", "stream/sink"),
		"stream/internal/coordinator": in("flow", "stream/checkpoint", "stream/source", "stream/state", "stream/internal/protocol"),
		"stream/internal/graph": in("flow", "memory", "stream/checkpoint", "stream/state", "stream/source", "stream/internal/core",
			"stream/internal/protocol", "stream/internal/task", "stream/internal/coordinator"),
		"stream/internal/runner": in("flow", "internal/wire", "stream/checkpoint", "stream/source", "stream/internal/protocol",
			"stream/internal/coordinator", "stream/internal/graph"),
		// the Kafka connector: a source and a sink of the stream contracts
		// over franz-go; no runtime, no DataSet API
		"connectors/kafka": func(p string) bool {
			switch p {
			case module + "/stream", module + "/stream/source", module + "/stream/sink", module + "/stream/watermark",
				module + "/clock", module + "/formats":
				return true
			}
			return isStd(p) || strings.HasPrefix(p, "github.com/twmb/franz-go/") || strings.HasPrefix(p, module+"/formats/")
		},
		// the cluster's control plane knows programs only as cluster.Program:
		// no engine, no API in it; gRPC is its only transport (the shuffle's
		// ends a spread attempt gets)
		"cluster":           func(p string) bool { return isStd(p) || p == module+"/cluster/shuffle" },
		"cluster/ha/memory": func(p string) bool { return isStd(p) || p == module+"/cluster/ha" },
		"cluster/internal/rpc": func(p string) bool {
			return isStd(p) || p == module+"/cluster" || strings.HasPrefix(p, "google.golang.org/grpc")
		},
		"cluster/jobmanager": func(p string) bool {
			switch p {
			case module + "/cluster", module + "/cluster/ha", module + "/cluster/ha/memory", module + "/cluster/internal/rpc",
				module + "/cluster/rest", module + "/clock", module + "/stream/checkpoint/s3":
				return true
			}
			return isStd(p) || strings.HasPrefix(p, "google.golang.org/grpc")
		},
		"cluster/taskmanager": func(p string) bool {
			switch p {
			case module + "/cluster", module + "/cluster/ha", module + "/cluster/internal/rpc", module + "/cluster/shuffle":
				return true
			}
			return isStd(p) || strings.HasPrefix(p, "google.golang.org/grpc")
		},
		// the operator test harness drives stream's operators
		"stream/streamtest": streamAPI,
		// the generator writes files: no engine in it
		"tpch/dbgen": func(p string) bool {
			return isStd(p) || p == module+"/formats" || strings.HasPrefix(p, "github.com/parquet-go/")
		},
	}
	for dir, imps := range pkgs {
		for p := range imps {
			if strings.HasPrefix(p, module+"/cmd") {
				t.Errorf("%s imports %s: nothing imports cmd", dir, p)
			}
			if (dir == "optimizer" || strings.HasPrefix(dir, "optimizer/")) && strings.HasPrefix(p, module+"/") && !strings.HasPrefix(p, module+"/optimizer") {
				t.Errorf("%s imports %s: the optimizer imports nothing of weir but itself (never the runtime)", dir, p)
			}
			if strings.HasPrefix(dir, "formats/") && strings.HasPrefix(p, module+"/") && p != module+"/formats" {
				t.Errorf("%s imports %s: a format imports nothing of weir but the formats contracts", dir, p)
			}
			if (dir == "dataset" || strings.HasPrefix(dir, "dataset/")) && (p == module+"/stream" || strings.HasPrefix(p, module+"/stream/")) {
				t.Errorf("%s imports %s: the DataSet API does not build on the DataStream API", dir, p)
			}
			if ok, ruled := allowed[dir]; ruled && !ok(p) {
				t.Errorf("%s imports %s, which docs/ARCHITECTURE.md does not allow", dir, p)
			}
		}
	}
}
