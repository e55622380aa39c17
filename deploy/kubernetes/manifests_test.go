// Package kubernetes_test checks the Kubernetes manifests and the
// Dockerfile: every document decodes strictly into its Kubernetes type,
// the objects refer to one another correctly, and every weir container's
// arguments are a weir command and flags that command takes.
package kubernetes_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/weirdata/weir/internal/cli"
)

// image is the image of the weir containers.
const image = "weir:latest"

// manifests holds the decoded objects by kind and name.
type manifests struct {
	deployments  map[string]*appsv1.Deployment
	statefulSets map[string]*appsv1.StatefulSet
	services     map[string]*corev1.Service
	secrets      map[string]*corev1.Secret
	accounts     map[string]*corev1.ServiceAccount
	roles        map[string]*rbacv1.Role
	bindings     map[string]*rbacv1.RoleBinding
}

// strict decodes the JSON doc into v refusing unknown fields, so that a
// misspelt or misplaced field fails.
func strict(doc []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func load(t *testing.T) manifests {
	t.Helper()
	m := manifests{map[string]*appsv1.Deployment{}, map[string]*appsv1.StatefulSet{}, map[string]*corev1.Service{},
		map[string]*corev1.Secret{}, map[string]*corev1.ServiceAccount{}, map[string]*rbacv1.Role{}, map[string]*rbacv1.RoleBinding{}}
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(f))
		for n := 1; ; n++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: document %d: %v", file, n, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			js, err := utilyaml.ToJSON(doc)
			if err != nil {
				t.Fatalf("%s: document %d: %v", file, n, err)
			}
			var tm metav1.TypeMeta
			if err := json.Unmarshal(js, &tm); err != nil {
				t.Fatalf("%s: document %d: %v", file, n, err)
			}
			where := file + ": " + tm.Kind
			var meta *metav1.ObjectMeta
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 Deployment":
				var o appsv1.Deployment
				err, meta = strict(js, &o), &o.ObjectMeta
				m.deployments[o.Name] = &o
			case "apps/v1 StatefulSet":
				var o appsv1.StatefulSet
				err, meta = strict(js, &o), &o.ObjectMeta
				m.statefulSets[o.Name] = &o
			case "v1 Service":
				var o corev1.Service
				err, meta = strict(js, &o), &o.ObjectMeta
				m.services[o.Name] = &o
			case "v1 Secret":
				var o corev1.Secret
				err, meta = strict(js, &o), &o.ObjectMeta
				m.secrets[o.Name] = &o
			case "v1 ServiceAccount":
				var o corev1.ServiceAccount
				err, meta = strict(js, &o), &o.ObjectMeta
				m.accounts[o.Name] = &o
			case "rbac.authorization.k8s.io/v1 Role":
				var o rbacv1.Role
				err, meta = strict(js, &o), &o.ObjectMeta
				m.roles[o.Name] = &o
			case "rbac.authorization.k8s.io/v1 RoleBinding":
				var o rbacv1.RoleBinding
				err, meta = strict(js, &o), &o.ObjectMeta
				m.bindings[o.Name] = &o
			default:
				t.Fatalf("%s: document %d: unexpected %s %s", file, n, tm.APIVersion, tm.Kind)
			}
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if meta.Name == "" || meta.Labels["app.kubernetes.io/name"] != "weir" {
				t.Errorf("%s %q: wants a name and the label app.kubernetes.io/name: weir", where, meta.Name)
			}
		}
		f.Close()
	}
	return m
}

// podSpec returns the pod template of the workload name, and its replicas.
func (m manifests) podSpec(name string) (*corev1.PodTemplateSpec, int32, bool) {
	if d, ok := m.deployments[name]; ok {
		return &d.Spec.Template, *d.Spec.Replicas, true
	}
	if s, ok := m.statefulSets[name]; ok {
		return &s.Spec.Template, *s.Spec.Replicas, true
	}
	return nil, 0, false
}

func TestManifests(t *testing.T) {
	m := load(t)
	jm, replicas, ok := m.podSpec("weir-jobmanager")
	if !ok || replicas != 2 {
		t.Fatalf("weir-jobmanager: found %v with %d replicas, want a leader and a standby", ok, replicas)
	}
	if _, ok := m.deployments["weir-jobmanager"]; !ok {
		t.Errorf("weir-jobmanager is not a Deployment")
	}
	tm, replicas, ok := m.podSpec("weir-taskmanager")
	if !ok || replicas < 1 {
		t.Fatalf("weir-taskmanager: found %v with %d replicas", ok, replicas)
	}

	// The JobManagers' Service: rest 8081 and rpc 6123 onto named ports of
	// the JobManager pods.
	svc, ok := m.services["weir-jobmanager"]
	if !ok {
		t.Fatal("no Service weir-jobmanager")
	}
	ports := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p.Port
		if !hasPort(jm, p.TargetPort.String()) {
			t.Errorf("Service weir-jobmanager: port %s targets %s, which the JobManager does not name", p.Name, p.TargetPort.String())
		}
	}
	if ports["rest"] != 8081 || ports["rpc"] != 6123 {
		t.Errorf("Service weir-jobmanager ports %v, want rest 8081 and rpc 6123", ports)
	}

	// Every Service selects the pods of some workload, every workload's
	// selector its own template.
	for name, s := range m.services {
		found := false
		for _, w := range append(slices.Collect(mapsKeys(m.deployments)), slices.Collect(mapsKeys(m.statefulSets))...) {
			pod, _, _ := m.podSpec(w)
			found = found || selects(s.Spec.Selector, pod.Labels)
		}
		if !found {
			t.Errorf("Service %s selects no pods", name)
		}
	}
	for name, d := range m.deployments {
		if !selects(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			t.Errorf("Deployment %s: selector does not select its template", name)
		}
	}
	for name, s := range m.statefulSets {
		if !selects(s.Spec.Selector.MatchLabels, s.Spec.Template.Labels) {
			t.Errorf("StatefulSet %s: selector does not select its template", name)
		}
		if _, ok := m.services[s.Spec.ServiceName]; !ok {
			t.Errorf("StatefulSet %s: no Service %s", name, s.Spec.ServiceName)
		}
	}

	// Secrets, service accounts, roles and $(VAR) references resolve.
	for _, w := range []string{"weir-jobmanager", "weir-taskmanager", "weir-etcd"} {
		pod, _, ok := m.podSpec(w)
		if !ok {
			t.Errorf("no workload %s", w)
			continue
		}
		if sa := pod.Spec.ServiceAccountName; sa != "" && m.accounts[sa] == nil {
			t.Errorf("%s: no ServiceAccount %s", w, sa)
		}
		for _, c := range pod.Spec.Containers {
			m.checkEnv(t, w, c)
		}
	}
	for name, b := range m.bindings {
		if m.roles[b.RoleRef.Name] == nil {
			t.Errorf("RoleBinding %s: no Role %s", name, b.RoleRef.Name)
		}
		for _, s := range b.Subjects {
			if m.accounts[s.Name] == nil {
				t.Errorf("RoleBinding %s: no ServiceAccount %s", name, s.Name)
			}
		}
	}

	// HA on etcd through the etcd Service, checkpoints on S3 with the AWS
	// variables, the REST token from its Secret.
	jmArgs := weirArgs(t, jm, "jobmanager")
	tmArgs := weirArgs(t, tm, "taskmanager")
	for _, args := range [][]string{jmArgs, tmArgs} {
		if flag(args, "ha") != "etcd" || flag(args, "ha-cluster-id") == "" {
			t.Errorf("%s: want --ha=etcd and --ha-cluster-id: %v", args[0], args)
		}
		ep := flag(args, "ha-etcd-endpoints")
		etcd := m.services["weir-etcd"]
		if etcd == nil || ep != "http://weir-etcd:"+itoa(etcd.Spec.Ports[0].Port) {
			t.Errorf("%s: --ha-etcd-endpoints %q is not the weir-etcd Service", args[0], ep)
		}
	}
	if flag(jmArgs, "ha-lease-ttl") == "" || !strings.HasPrefix(flag(jmArgs, "checkpoint-dir"), "s3://") {
		t.Errorf("jobmanager: want --ha-lease-ttl and an s3:// --checkpoint-dir: %v", jmArgs)
	}
	if flag(tmArgs, "slots") == "" {
		t.Errorf("taskmanager: want --slots: %v", tmArgs)
	}
	// the data plane on the pod's IP, on a port the pod names
	if a := flag(tmArgs, "data-address"); a != "$(POD_IP):6124" || !hasPort(tm, "data") || tm.Spec.Containers[0].Ports[0].ContainerPort != 6124 {
		t.Errorf("taskmanager: want --data-address=$(POD_IP):6124 on a port named data: %v", tmArgs)
	}
	tokenFrom := envSecret(jm.Spec.Containers[0], "WEIR_REST_TOKEN")
	if tokenFrom == nil || m.secrets[tokenFrom.Name] == nil {
		t.Errorf("jobmanager: WEIR_REST_TOKEN is not from a Secret of the manifests")
	}
	for _, pod := range []*corev1.PodTemplateSpec{jm, tm} {
		c := pod.Spec.Containers[0]
		for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
			if !m.envFromSecret(c, v) {
				t.Errorf("%s: %s is not from a Secret of the manifests", c.Name, v)
			}
		}
	}
}

// knownFlags are the flags the issue names for weir jobmanager and weir
// taskmanager. The test checks against them only while this build has no
// such command; once it has, the command's own flags are the check.
var knownFlags = map[string][]string{
	"jobmanager":  {"rest-address", "rpc-address", "rest-token", "ha", "ha-etcd-endpoints", "ha-cluster-id", "ha-lease-ttl", "checkpoint-dir"},
	"taskmanager": {"jobmanager", "ha", "ha-etcd-endpoints", "ha-cluster-id", "ha-lease-ttl", "slots", "memory"},
}

// weirArgs returns the arguments of pod's weir container, after checking
// that they are the command sub and flags it takes, each as --name=value.
func weirArgs(t *testing.T, pod *corev1.PodTemplateSpec, sub string) []string {
	t.Helper()
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", sub, len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if c.Image != image || len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != sub {
		t.Fatalf("%s: image %q, command %v, args %v: want %s's entrypoint with args %s ...", c.Name, c.Image, c.Command, c.Args, image, sub)
	}
	for _, a := range c.Args[1:] {
		if !strings.HasPrefix(a, "--") || !strings.Contains(a, "=") {
			t.Errorf("%s: argument %q: want --flag=value", sub, a)
		}
	}
	cmd, _, err := cli.NewRootCommand().Find([]string{sub})
	if err == nil && cmd.Name() == sub {
		// The command's own flags parse the arguments: names and values.
		if err := cmd.ParseFlags(c.Args[1:]); err != nil {
			t.Errorf("weir %s does not take %v: %v", sub, c.Args[1:], err)
		}
		return c.Args
	}
	t.Logf("weir %s is not a command of this build: checking the flags' names against the issue's", sub)
	for _, a := range c.Args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !slices.Contains(knownFlags[sub], name) {
			t.Errorf("weir %s: unknown flag --%s", sub, name)
		}
	}
	return c.Args
}

// flag returns the value of --name in args, "" without it.
func flag(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkEnv checks that c's $(VAR) references name variables c defines and
// that its Secret references name Secrets and keys of the manifests.
func (m manifests) checkEnv(t *testing.T, w string, c corev1.Container) {
	t.Helper()
	defined := map[string]bool{}
	for _, e := range c.Env {
		defined[e.Name] = true
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			s := m.secrets[ref.Name]
			if _, ok := s.StringData[ref.Key]; s == nil || !ok {
				t.Errorf("%s: %s: no key %s in a Secret %s", w, e.Name, ref.Key, ref.Name)
			}
		}
	}
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil {
			s := m.secrets[from.SecretRef.Name]
			if s == nil {
				t.Errorf("%s: no Secret %s", w, from.SecretRef.Name)
				continue
			}
			for k := range s.StringData {
				defined[k] = true
			}
		}
	}
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		for _, ref := range varRef.FindAllStringSubmatch(a, -1) {
			if !defined[ref[1]] {
				t.Errorf("%s: %q refers to $(%s), which the container does not define", w, a, ref[1])
			}
		}
	}
}

func envSecret(c corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

// envFromSecret reports whether c takes the variable name from a Secret of
// the manifests.
func (m manifests) envFromSecret(c corev1.Container, name string) bool {
	if ref := envSecret(c, name); ref != nil {
		return m.secrets[ref.Name] != nil
	}
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil && m.secrets[from.SecretRef.Name] != nil {
			if _, ok := m.secrets[from.SecretRef.Name].StringData[name]; ok {
				return true
			}
		}
	}
	return false
}

func hasPort(pod *corev1.PodTemplateSpec, name string) bool {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

// selects reports whether the selector sel matches labels.
func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func itoa(n int32) string { b, _ := json.Marshal(n); return string(b) }

// TestDockerfile checks the Dockerfile's stages: a build on golang:1.26 of
// the package cmd/weir, copied into a small image whose entrypoint is the
// binary.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	var build, copyBin, entry string
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "FROM "):
			from = append(from, strings.Fields(line)[1])
		case strings.HasPrefix(line, "RUN ") && strings.Contains(line, "go build"):
			build = line
		case strings.HasPrefix(line, "COPY --from="):
			copyBin = line
		case strings.HasPrefix(line, "ENTRYPOINT "):
			entry = line
		}
	}
	if len(from) != 2 || from[0] != "golang:1.26" || !strings.HasPrefix(from[1], "gcr.io/distroless/") {
		t.Errorf("stages %v: want golang:1.26, then distroless", from)
	}
	f := strings.Fields(build)
	if len(f) == 0 || f[len(f)-1] != "./cmd/weir" || !strings.Contains(build, "CGO_ENABLED=0") {
		t.Errorf("build %q: want a static build of ./cmd/weir", build)
	}
	if _, err := os.Stat(filepath.Join("..", "..", "cmd", "weir", "main.go")); err != nil {
		t.Errorf("the Dockerfile builds ./cmd/weir: %v", err)
	}
	var out string
	if i := slices.Index(f, "-o"); i >= 0 && i+1 < len(f) {
		out = f[i+1]
	}
	cf := strings.Fields(copyBin)
	var ef []string
	if err := json.Unmarshal([]byte(strings.TrimPrefix(entry, "ENTRYPOINT ")), &ef); err != nil || len(ef) != 1 {
		t.Fatalf("entrypoint %q: want the binary alone, in JSON form (%v)", entry, err)
	}
	if len(cf) != 4 || cf[2] != out || cf[3] != ef[0] {
		t.Errorf("the binary built at %q, copied by %q, is not the entrypoint %q", out, copyBin, ef[0])
	}
}

// TestKubernetesHA checks the variant the README and jobmanager.yaml
// describe: the weir containers' arguments with the --ha-etcd-* flags
// replaced by --ha=kubernetes are arguments the commands take, and
// rbac.yaml grants the pods' ServiceAccount what the store does with
// Leases and ConfigMaps.
func TestKubernetesHA(t *testing.T) {
	m := load(t)
	for _, w := range []string{"weir-jobmanager", "weir-taskmanager"} {
		pod, _, ok := m.podSpec(w)
		if !ok {
			t.Fatalf("no workload %s", w)
		}
		c := pod.Spec.Containers[0]
		var args []string
		for _, a := range c.Args {
			switch {
			case a == "--ha=etcd":
				args = append(args, "--ha=kubernetes")
			case strings.HasPrefix(a, "--ha-etcd-"):
			default:
				args = append(args, a)
			}
		}
		if !slices.Contains(args, "--ha=kubernetes") || flag(args, "ha-cluster-id") == "" {
			t.Errorf("%s: the variant's args %v: want --ha=kubernetes and --ha-cluster-id", w, args)
		}
		cmd, _, err := cli.NewRootCommand().Find([]string{args[0]})
		if err != nil || cmd.Name() != args[0] {
			t.Fatalf("weir %s: %v", args[0], err)
		}
		if err := cmd.ParseFlags(args[1:]); err != nil {
			t.Errorf("weir %s does not take %v: %v", args[0], args[1:], err)
		}
		if v, err := cmd.Flags().GetString("ha"); err != nil || v != "kubernetes" {
			t.Errorf("weir %s: --ha is %q (%v)", args[0], v, err)
		}
		sa := pod.Spec.ServiceAccountName
		if !m.granted(sa, "coordination.k8s.io", "leases", "get", "create", "update") ||
			!m.granted(sa, "", "configmaps", "get", "create", "update") {
			t.Errorf("%s: ServiceAccount %q is not granted get, create and update of Leases and ConfigMaps", w, sa)
		}
	}
}

// granted reports whether a Role bound to the ServiceAccount sa allows
// verbs on resource of group.
func (m manifests) granted(sa, group, resource string, verbs ...string) bool {
	for _, b := range m.bindings {
		bound := false
		for _, s := range b.Subjects {
			bound = bound || (s.Kind == "ServiceAccount" && s.Name == sa)
		}
		r := m.roles[b.RoleRef.Name]
		if !bound || r == nil || b.RoleRef.Kind != "Role" {
			continue
		}
		left := slices.Clone(verbs)
		for _, rule := range r.Rules {
			if slices.Contains(rule.APIGroups, group) && slices.Contains(rule.Resources, resource) {
				left = slices.DeleteFunc(left, func(v string) bool { return slices.Contains(rule.Verbs, v) })
			}
		}
		if len(left) == 0 {
			return true
		}
	}
	return false
}
