package cmd

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// cliWidth is the terminal width cliRun's runs see (0: not a terminal).
var cliWidth = 0

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// cliResult is one run of the command.
type cliResult struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// cliRun runs the command through cobra exactly as main does, with client
// (if not nil) injected instead of one built from the kubeconfig, and the
// user's kubeconfig hidden.
func cliRun(t *testing.T, client kubernetes.Interface, stdin io.Reader, args ...string) cliResult {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-kubeconfig"))
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errOut bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{In: stdin, Out: &out, ErrOut: &errOut})
	if client != nil {
		if c, ok := client.(*fake.Clientset); ok && c.Resources == nil {
			c.Resources = builtinResources // what a real API server's discovery lists
		}
		o.client = client
	}
	o.width = func(io.Writer) int { return cliWidth }
	start := time.Now()
	code := run(o, args)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String(), elapsed: time.Since(start)}
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// wantExit checks the exit code and that stderr is exactly one "error: "
// line mentioning each of parts.
func wantExit(t *testing.T, r cliResult, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\n%s", r.code, code, r)
	}
	if code == ExitOK {
		if r.stderr != "" {
			t.Errorf("stderr not empty: %q", r.stderr)
		}
		return
	}
	if !strings.HasPrefix(r.stderr, "error: ") || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("stderr is not one \"error: \" line: %q", r.stderr)
	}
	for _, p := range parts {
		if !strings.Contains(r.stderr, p) {
			t.Errorf("stderr %q does not mention %q", r.stderr, p)
		}
	}
}

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenFile(t, filepath.Join("testdata", name+".golden"), got)
}

// goldenFile compares got with the file at path, or rewrites it with -update.
func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/cmd -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./pkg/cmd -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// onlyReadActions requires that the fake clientset saw get and list only.
func onlyReadActions(t *testing.T, c *fake.Clientset) {
	t.Helper()
	if len(c.Actions()) == 0 {
		t.Error("no API calls recorded")
	}
	for _, a := range c.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" {
			t.Errorf("the live path issued %q on %s: only get and list are allowed", v, a.GetResource().Resource)
		}
	}
}

// --- a small live cluster ---------------------------------------------------

var liveNow = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

const liveNowFlag = "2025-01-01T12:00:00Z"

// liveObjects is Deployment prod/api mid-rollout: maxSurge 1 maxUnavailable
// 0, 5 replicas as old 3 + new 2 (one new pod not ready yet), annotated
// desired 5 / max 6. Scaled to 2: the split gives old 2 / new 1, then the
// rollout takes old to 1 and grows new back to 2. The old pods' UIDs run
// against their ready ages, so the outcome flips (R6 UID tie-break) once
// ages share a log2 bucket: stableUntil is a real time.
func liveObjects() []runtime.Object {
	replicas := int32(5)
	surge, unavail := intstr.FromInt32(1), intstr.FromInt32(0)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "prod", UID: "d0000000-0000-4000-8000-000000000000",
			CreationTimestamp: metav1.NewTime(liveNow.Add(-60 * 24 * time.Hour))},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}},
			Template: liveTemplate("api:2", ""),
		},
		Status: appsv1.DeploymentStatus{Replicas: 5, ReadyReplicas: 4, AvailableReplicas: 4},
	}
	old := liveRS(d, "api-6f7d8", "6f7d8", "api:1", 3, 10*24*time.Hour)
	nw := liveRS(d, "api-9c4b2", "9c4b2", "api:2", 2, 20*time.Minute)
	objs := []runtime.Object{d, old, nw,
		livePod(old, "api-6f7d8-aaaaa", "c0000000-0000-4000-8000-00000000000c", "node-1", 3*time.Hour, true, 0),
		livePod(old, "api-6f7d8-bbbbb", "c0000000-0000-4000-8000-00000000000b", "node-1", 30*time.Hour, true, 1),
		livePod(old, "api-6f7d8-ccccc", "c0000000-0000-4000-8000-00000000000a", "node-2", 50*time.Hour, true, 0),
		livePod(nw, "api-9c4b2-ddddd", "c0000000-0000-4000-8000-00000000000d", "node-3", 15*time.Minute, true, 0),
		livePod(nw, "api-9c4b2-eeeee", "c0000000-0000-4000-8000-00000000000e", "node-4", 2*time.Minute, false, 4),
		// Another app in the namespace, and a pod in another namespace.
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "prod", Labels: map[string]string{"app": "db"}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-elsewhere", Namespace: "staging", Labels: map[string]string{"app": "api"}}},
	}
	return objs
}

func liveTemplate(image, hash string) corev1.PodTemplateSpec {
	l := map[string]string{"app": "api"}
	if hash != "" {
		l[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: image}}}}
}

func liveRS(d *appsv1.Deployment, name, hash, image string, replicas int32, age time.Duration) *appsv1.ReplicaSet {
	sel := map[string]string{"app": "api", appsv1.DefaultDeploymentUniqueLabelKey: hash}
	yes := true
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "prod", UID: types.UID("e0000000-0000-4000-8000-0000000" + hash),
			CreationTimestamp: metav1.NewTime(liveNow.Add(-age)), Labels: sel,
			Annotations:     map[string]string{"deployment.kubernetes.io/desired-replicas": "5", "deployment.kubernetes.io/max-replicas": "6"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec:   appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: liveTemplate(image, hash)},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas},
	}
}

func livePod(rs *appsv1.ReplicaSet, name, uid, node string, age time.Duration, ready bool, restarts int32) *corev1.Pod {
	yes := true
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "prod", UID: types.UID(uid), Labels: rs.Spec.Template.Labels,
			CreationTimestamp: metav1.NewTime(liveNow.Add(-age - 20*time.Second)),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "api", Image: rs.Spec.Template.Spec.Containers[0].Image}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(liveNow.Add(-age))}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "api", Ready: ready, RestartCount: restarts}}},
	}
}
