package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	contract "github.com/scale-preview/scale-preview/pkg/prediction"
)

// preemptSchedulerName is the only profile of the scheduler this test
// starts: it schedules the pending pods that name it and nothing else, so
// the Pending pods other tests leave behind (default-scheduler) stay unbound.
const preemptSchedulerName = "scale-preview-e2e"

// preemptScenarioLabel isolates scenarios: each preemptor selects its own
// scenario's nodes, so all scenarios share one scheduler run.
const preemptScenarioLabel = "e2e.scale-preview.io/preempt-scenario"

// preemptClasses are the PriorityClasses the scenarios use.
var preemptClasses = []struct {
	name   string
	value  int32
	policy corev1.PreemptionPolicy
}{
	{"preempt-e2e-low", 100, corev1.PreemptLowerPriority},
	{"preempt-e2e-mid", 500, corev1.PreemptLowerPriority},
	{"preempt-e2e-high", 1000, corev1.PreemptLowerPriority},
	{"preempt-e2e-never", 1000, corev1.PreemptNever},
	{"preempt-e2e-top", 2000, corev1.PreemptLowerPriority},
}

// preemptRunning is a pod bound to a node and Running since startedAgo.
type preemptRunning struct {
	name, node, class, cpu string
	startedAgo             time.Duration
	labels                 map[string]string
	// avoid: required anti-affinity (per node) against pods with these labels.
	avoid map[string]string
	// elsewhere: the pod is in the scenario's other namespace, not the
	// pending pod's (the scheduler preempts in any namespace).
	elsewhere bool
}

// preemptScenario: plain Node objects (name suffix -> allocatable cpu),
// running pods, optional PDBs (selector app=X, no disruptions allowed), and
// the pending pod; want is the hand-derived outcome.
type preemptScenario struct {
	name          string
	nodes         map[string]string
	running       []preemptRunning
	guardedApps   []string
	pendingClass  string
	pendingCPU    string
	pendingLabels map[string]string
	wantNode      string   // "" = no nomination
	wantVictims   []string // sorted
	wantEligible  bool
	why           string
	// manifest: predicted offline (-f) from an export of the cluster plus
	// the pod's manifest, which has no spec.priority yet; created after.
	manifest bool
}

var preemptScenarios = []preemptScenario{
	{
		// a wins on the lowest highest-victim priority (100 < 500); of its
		// two equal-priority pods the older is reprieved first and fits back.
		name:  "single-node",
		nodes: map[string]string{"a": "2", "b": "2"},
		running: []preemptRunning{
			{name: "low-old", node: "a", class: "preempt-e2e-low", cpu: "1", startedAgo: time.Hour},
			{name: "low-new", node: "a", class: "preempt-e2e-low", cpu: "500m", startedAgo: 5 * time.Minute},
			{name: "mid", node: "b", class: "preempt-e2e-mid", cpu: "1500m", startedAgo: time.Hour},
		},
		pendingClass: "preempt-e2e-high", pendingCPU: "1",
		wantNode: "a", wantVictims: []string{"low-new"}, wantEligible: true,
		why: "lowest highest-victim priority; reprieve order by start time",
	},
	{
		// a's victim has the lower priority, but its budget allows no
		// disruption: fewest PDB violations comes first, so b.
		name:  "pdb",
		nodes: map[string]string{"a": "2", "b": "2"},
		running: []preemptRunning{
			{name: "guarded", node: "a", class: "preempt-e2e-low", cpu: "1500m", startedAgo: time.Hour, labels: map[string]string{"app": "guarded"}},
			{name: "plain", node: "b", class: "preempt-e2e-mid", cpu: "1500m", startedAgo: time.Hour, labels: map[string]string{"app": "plain"}},
		},
		guardedApps:  []string{"guarded"},
		pendingClass: "preempt-e2e-high", pendingCPU: "1",
		wantNode: "b", wantVictims: []string{"plain"}, wantEligible: true,
		why: "fewest PDB violations beats a lower victim priority",
	},
	{
		// a holds only a higher-priority pod; b is smaller than the request.
		name:  "nothing-helps",
		nodes: map[string]string{"a": "2", "b": "500m"},
		running: []preemptRunning{
			{name: "top", node: "a", class: "preempt-e2e-top", cpu: "1500m", startedAgo: time.Hour},
		},
		pendingClass: "preempt-e2e-high", pendingCPU: "1",
		wantEligible: true,
		why:          "no lower-priority pod to remove; a node too small for the pod",
	},
	{
		// Preemption would help, but the pod's class says Never.
		name:  "policy-never",
		nodes: map[string]string{"a": "2"},
		running: []preemptRunning{
			{name: "low", node: "a", class: "preempt-e2e-low", cpu: "1500m", startedAgo: time.Hour},
		},
		pendingClass: "preempt-e2e-never", pendingCPU: "1",
		why: "preemptionPolicy Never",
	},
	{
		// Offline: the priority comes from the class in the export. On a
		// all four pods are below 1000; mid-a (500) and the oldest low pod
		// are reprieved, the two newer ones are not. b would lose mid-old
		// (500): a wins on the lowest highest-victim priority.
		name:  "manifest",
		nodes: map[string]string{"a": "2", "b": "2"},
		running: []preemptRunning{
			{name: "low-1", node: "a", class: "preempt-e2e-low", cpu: "500m", startedAgo: 2 * time.Hour},
			{name: "low-2", node: "a", class: "preempt-e2e-low", cpu: "500m", startedAgo: time.Hour},
			{name: "low-3", node: "a", class: "preempt-e2e-low", cpu: "500m", startedAgo: 30 * time.Minute},
			{name: "mid-a", node: "a", class: "preempt-e2e-mid", cpu: "500m", startedAgo: 10 * time.Minute},
			{name: "mid-old", node: "b", class: "preempt-e2e-mid", cpu: "1500m", startedAgo: time.Hour},
			{name: "mid-new", node: "b", class: "preempt-e2e-mid", cpu: "500m", startedAgo: 10 * time.Minute},
		},
		pendingClass: "preempt-e2e-high", pendingCPU: "1",
		wantNode: "a", wantVictims: []string{"low-2", "low-3"}, wantEligible: true,
		why:      "-f export + manifest; reprieve by priority, then start time",
		manifest: true,
	},
	{
		// a has cpu to spare, but its pod's required anti-affinity keeps the
		// pending pod out: removing that pod (100) beats b's (500).
		name:  "anti-affinity",
		nodes: map[string]string{"a": "2", "b": "2"},
		running: []preemptRunning{
			{name: "shy", node: "a", class: "preempt-e2e-low", cpu: "100m", startedAgo: time.Hour,
				labels: map[string]string{"app": "shy"}, avoid: map[string]string{"role": "critical"}},
			{name: "busy", node: "b", class: "preempt-e2e-mid", cpu: "1500m", startedAgo: time.Hour},
		},
		pendingClass: "preempt-e2e-high", pendingCPU: "1", pendingLabels: map[string]string{"role": "critical"},
		wantNode: "a", wantVictims: []string{"shy"}, wantEligible: true,
		why: "an existing pod's anti-affinity blocks the node until it is preempted",
	},
	{
		// The victims are in another namespace than the pending pod, and a
		// pod of that name also in the pending pod's (issue 35,
		// preempt-other-namespace): victims must say namespace/name.
		name:  "other-namespace",
		nodes: map[string]string{"a": "2", "b": "2"},
		running: []preemptRunning{
			{name: "api-1", node: "a", class: "preempt-e2e-low", cpu: "800m", startedAgo: time.Hour, elsewhere: true},
			{name: "api-2", node: "a", class: "preempt-e2e-low", cpu: "800m", startedAgo: 30 * time.Minute, elsewhere: true},
			{name: "api-1", node: "b", class: "preempt-e2e-mid", cpu: "1600m", startedAgo: time.Hour},
		},
		pendingClass: "preempt-e2e-high", pendingCPU: "1500m",
		wantNode: "a", wantVictims: []string{"api-1", "api-2"}, wantEligible: true,
		why: "victims in another namespace; lowest highest-victim priority",
	},
}

func (s preemptScenario) ns() string                   { return "preempt-e2e-" + s.name }
func (s preemptScenario) otherNS() string              { return s.ns() + "-x" }
func (s preemptScenario) nodeName(short string) string { return "preempt-e2e-" + s.name + "-" + short }

// preemptPendingName is the pending high-priority pod of every scenario.
const preemptPendingName = "preemptor"

// TestPreemptE2E predicts preemption for a pending pod with the plugin, then
// lets a real kube-scheduler v1.37.1 act, and compares its nominated node
// and the pods it deleted with the prediction (and with the hand-derived
// expectation). All scenarios are set up and predicted first; one scheduler
// run then handles them all.
func TestPreemptE2E(t *testing.T) {
	needPlugin(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := env.cp.admin

	cfgPath := filepath.Join(env.cp.dir, "preempt-scheduler.yaml")
	if err := os.WriteFile(cfgPath, []byte(preemptSchedulerConfig(env.cp.adminKubeconfig)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, pc := range preemptClasses {
		obj := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc.name}, Value: pc.value, PreemptionPolicy: ptrTo(pc.policy)}
		if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create PriorityClass %s: %v", pc.name, err)
		}
	}
	t.Cleanup(func() { preemptCleanup(c) })
	for _, s := range preemptScenarios {
		if err := preemptSetUp(ctx, s); err != nil {
			t.Fatalf("%s: set up: %v", s.name, err)
		}
	}
	preds := map[string]*contract.Prediction{}
	for _, s := range preemptScenarios {
		args := []string{"pod/" + preemptPendingName, "-n", s.ns(), "--scheduler-config", cfgPath, "-o", "json"}
		if s.manifest {
			files, err := preemptExport(ctx, s)
			if err != nil {
				t.Fatalf("%s: export: %v", s.name, err)
			}
			args = append(args, "-f", files[0], "-f", files[1])
		} else {
			args = append(args, "--kubeconfig", env.cp.viewerKubeconfig)
		}
		preds[s.name] = preemptPredict(ctx, t, s.name, args...)
	}
	// Honesty: the pods name a profile the plugin cannot know without the
	// scheduler's configuration, so without it the answer is uncertain.
	first := preemptScenarios[0]
	if p := preemptPredict(ctx, t, first.name+" without --scheduler-config", "pod/"+preemptPendingName, "-n", first.ns(),
		"--kubeconfig", env.cp.viewerKubeconfig, "-o", "json"); p.Certain || !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, preemptSchedulerName)
	}) {
		t.Errorf("without --scheduler-config: certain %v, warnings %q; want uncertain, naming schedulerName %q", p.Certain, p.Warnings, preemptSchedulerName)
	}
	// -o name prints kubectl's pod/NAME, which cannot say that the victims
	// are in another namespace than -n's: refused, nothing printed.
	if i := slices.IndexFunc(preemptScenarios, func(s preemptScenario) bool { return s.name == "other-namespace" }); i >= 0 {
		s := preemptScenarios[i]
		run, err := runPlugin(ctx, env.pluginPath, "pod/"+preemptPendingName, "-n", s.ns(), "--scheduler-config", cfgPath,
			"--kubeconfig", env.cp.viewerKubeconfig, "-o", "name")
		if err != nil || run.exitCode != 2 || run.stdout != "" || !strings.Contains(run.stderr, s.otherNS()) {
			t.Errorf("other-namespace -o name: want exit 2 naming %s and no output: %v %s", s.otherNS(), err, run)
		}
	}
	// The manifest pods are created now, after their offline prediction.
	for _, s := range preemptScenarios {
		if s.manifest {
			if _, err := c.CoreV1().Pods(s.ns()).Create(ctx, preemptPendingPod(s), metav1.CreateOptions{}); err != nil {
				t.Fatalf("%s: create the pending pod: %v", s.name, err)
			}
		}
	}
	predicted := time.Now()

	stop := preemptStartScheduler(t, cfgPath)
	observed := map[string]preemptObserved{}
	// Twice: until each scenario is decided, then after 3 s of quiet, so
	// that a late deletion or nomination would be seen.
	for pass := range 2 {
		if pass == 1 {
			time.Sleep(3 * time.Second)
		}
		for _, s := range preemptScenarios {
			o, err := preemptObserve(ctx, s, len(preds[s.name].Victims))
			if err != nil {
				t.Fatalf("%s: %v\nscheduler log:\n%s", s.name, err, tailFile(filepath.Join(env.cp.dir, "kube-scheduler-preempt.log"), 30))
			}
			observed[s.name] = o
		}
	}
	stop()
	acted := time.Now()

	for _, s := range preemptScenarios {
		t.Run(s.name, func(t *testing.T) {
			p, o := preds[s.name], observed[s.name]
			preemptCompare(t, s, p, o)
		})
	}
	t.Logf("preemption e2e: %d scenarios; set up and predicted in %s, scheduler acted in %s",
		len(preemptScenarios), predicted.Sub(start).Round(time.Millisecond), acted.Sub(predicted).Round(time.Millisecond))
}

// preemptSchedulerConfig is the KubeSchedulerConfiguration of the test's
// scheduler; the plugin reads the same file with --scheduler-config.
func preemptSchedulerConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
`, kubeconfig, preemptSchedulerName)
}

// preemptStartScheduler runs kube-scheduler on loopback (no serving port)
// until stop is called.
func preemptStartScheduler(t *testing.T, cfgPath string) (stop func()) {
	return startControlPlaneExtra(t, "kube-scheduler-preempt", "kube-scheduler", "--config", cfgPath, "--secure-port", "0", "--v", "2")
}

func preemptSetUp(ctx context.Context, s preemptScenario) error {
	c := env.cp.admin
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns()}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if slices.ContainsFunc(s.running, func(r preemptRunning) bool { return r.elsewhere }) {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.otherNS()}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for short, cpu := range s.nodes {
		if err := preemptCreateNode(ctx, s, s.nodeName(short), cpu); err != nil {
			return fmt.Errorf("node %s: %w", short, err)
		}
	}
	now := time.Now()
	for _, r := range s.running {
		pod := preemptPod(s.runningNS(r), r.name, r.class, r.cpu, r.labels)
		pod.Spec.NodeName = s.nodeName(r.node)
		if r.avoid != nil {
			pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: r.avoid}, TopologyKey: corev1.LabelHostname}}}}
		}
		created, err := c.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// In place of a kubelet: Running and Ready, started at a chosen time
		// (the scheduler's reprieve order and last criterion read startTime).
		started := metav1.NewTime(now.Add(-r.startedAgo).Truncate(time.Second))
		created.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started, HostIP: "127.0.0.1",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: appContainer, Image: created.Spec.Containers[0].Image, Ready: true,
				Started: ptrTo(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}},
		}
		if _, err := c.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	for _, app := range s.guardedApps {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: s.ns()},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
		created, err := c.PolicyV1().PodDisruptionBudgets(s.ns()).Create(ctx, pdb, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// The suite runs no disruption controller: write the status it would
		// (one healthy pod, one required, no disruption allowed).
		created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation, DisruptionsAllowed: 0,
			CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
		if _, err := c.PolicyV1().PodDisruptionBudgets(s.ns()).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if s.manifest {
		return nil
	}
	// The pending pod exists before the scheduler runs; nothing else
	// schedules its schedulerName.
	_, err := c.CoreV1().Pods(s.ns()).Create(ctx, preemptPendingPod(s), metav1.CreateOptions{})
	return err
}

func preemptPendingPod(s preemptScenario) *corev1.Pod {
	pending := preemptPod(s.ns(), preemptPendingName, s.pendingClass, s.pendingCPU, s.pendingLabels)
	pending.Spec.SchedulerName = preemptSchedulerName
	pending.Spec.NodeSelector = map[string]string{preemptScenarioLabel: s.name}
	return pending
}

func preemptPredict(ctx context.Context, t *testing.T, what string, args ...string) *contract.Prediction {
	t.Helper()
	run, err := runPlugin(ctx, env.pluginPath, args...)
	if err != nil || run.exitCode != 0 {
		t.Fatalf("%s: plugin: %v %s", what, err, run)
	}
	var p contract.Prediction
	if err := json.Unmarshal([]byte(run.stdout), &p); err != nil {
		t.Fatalf("%s: plugin JSON: %v\n%s", what, err, run.stdout)
	}
	t.Logf("%s: predicted %q (nominated %q, victims %v, certain %v)", what, p.Message, p.NominatedNode, p.Victims, p.Certain)
	return &p
}

// preemptExport writes what `kubectl get nodes,pods,pdb,priorityclasses
// -A -o yaml` would (a v1 List) and the pending pod's manifest, which has
// no priority: the plugin resolves it from the class, as admission will.
func preemptExport(ctx context.Context, s preemptScenario) ([2]string, error) {
	c := env.cp.admin
	var files [2]string
	var items []any
	add := func(apiVersion, kind string, obj any) error {
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		m["apiVersion"], m["kind"] = apiVersion, kind
		items = append(items, m)
		return nil
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return files, err
	}
	for i := range nodes.Items {
		if err := add("v1", "Node", &nodes.Items[i]); err != nil {
			return files, err
		}
	}
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return files, err
	}
	for i := range pods.Items {
		if err := add("v1", "Pod", &pods.Items[i]); err != nil {
			return files, err
		}
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return files, err
	}
	for i := range pdbs.Items {
		if err := add("policy/v1", "PodDisruptionBudget", &pdbs.Items[i]); err != nil {
			return files, err
		}
	}
	pcs, err := c.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return files, err
	}
	for i := range pcs.Items {
		if err := add("scheduling.k8s.io/v1", "PriorityClass", &pcs.Items[i]); err != nil {
			return files, err
		}
	}
	list, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return files, err
	}
	manifest := preemptPendingPod(s)
	manifest.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	pod, err := yaml.Marshal(manifest)
	if err != nil {
		return files, err
	}
	files[0] = filepath.Join(env.cp.dir, "preempt-"+s.name+"-cluster.yaml")
	files[1] = filepath.Join(env.cp.dir, "preempt-"+s.name+"-pod.yaml")
	if err := os.WriteFile(files[0], list, 0o600); err != nil {
		return files, err
	}
	return files, os.WriteFile(files[1], pod, 0o600)
}

func preemptPod(ns, name, class, cpu string, labels map[string]string) *corev1.Pod {
	spec := podTemplate(labels, false).Spec
	spec.PriorityClassName = class
	spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: spec}
}

// preemptCreateNode creates a Ready node without a kubelet. The
// TaintNodesByCondition admission plugin adds the not-ready taint on
// create; the node lifecycle controller (not run here) would remove it.
func preemptCreateNode(ctx context.Context, s preemptScenario, name, cpu string) error {
	c := env.cp.admin
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, preemptScenarioLabel: s.name}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}},
	}
	created, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Spec.Taints = nil
	_, err = c.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{})
	return err
}

// preemptObserved is what the scheduler did to a scenario.
type preemptObserved struct {
	nominated   string
	deleted     []string // sorted namespace/name of pods with a deletionTimestamp
	preempted   []string // sorted namespace/name with DisruptionTarget PreemptionByScheduler
	unscheduled string   // the PodScheduled=False message
}

// preemptObserve waits until the scheduler has tried the pending pod (its
// PodScheduled condition is False) and, when it nominated a node, until
// the predicted number of pods is terminating.
func preemptObserve(ctx context.Context, s preemptScenario, wantDeleted int) (preemptObserved, error) {
	c := env.cp.admin
	var o preemptObserved
	read := func() error {
		pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		o = preemptObserved{}
		for _, p := range pods.Items {
			if p.Namespace != s.ns() && p.Namespace != s.otherNS() {
				continue
			}
			if p.Name == preemptPendingName && p.Namespace == s.ns() {
				o.nominated = p.Status.NominatedNodeName
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
						o.unscheduled = cond.Reason + ": " + cond.Message
					}
				}
				if p.Spec.NodeName != "" {
					return fmt.Errorf("the pending pod was bound to %s: it fits without preemption", p.Spec.NodeName)
				}
				continue
			}
			if p.DeletionTimestamp != nil {
				o.deleted = append(o.deleted, p.Namespace+"/"+p.Name)
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue && cond.Reason == "PreemptionByScheduler" {
					o.preempted = append(o.preempted, p.Namespace+"/"+p.Name)
				}
			}
		}
		slices.Sort(o.deleted)
		slices.Sort(o.preempted)
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	err := pollUntil(wctx, 200*time.Millisecond, func(context.Context) (bool, error) {
		if err := read(); err != nil {
			return false, err
		}
		if o.unscheduled == "" {
			return false, nil
		}
		return o.nominated == "" || len(o.deleted) >= wantDeleted, nil
	})
	if err != nil {
		return o, fmt.Errorf("waiting for the scheduler (seen %+v): %w", o, err)
	}
	return o, nil
}

func preemptCompare(t *testing.T, s preemptScenario, p *contract.Prediction, o preemptObserved) {
	t.Logf("%s (%s): scheduler nominated %q, deleted %v; %s", s.name, s.why, o.nominated, o.deleted, o.unscheduled)
	if p == nil || p.Preemption == nil {
		t.Fatalf("no preemption section in the prediction: %+v", p)
	}
	if !p.Certain {
		t.Errorf("prediction not certain: %v", p.Warnings)
	}
	predVictims := slices.Clone(p.Victims)
	slices.Sort(predVictims)
	// The prediction against the hand-derived expectation.
	if p.NominatedNode != preemptWantNode(s) || !slices.Equal(predVictims, preemptWantVictims(s)) || p.Preemption.Eligible != s.wantEligible {
		t.Errorf("prediction: node %q victims %v eligible %v; want node %q victims %v eligible %v",
			p.NominatedNode, predVictims, p.Preemption.Eligible, preemptWantNode(s), preemptWantVictims(s), s.wantEligible)
	}
	// The prediction against the real scheduler.
	if o.nominated != p.NominatedNode {
		t.Errorf("scheduler nominated %q, plugin predicted %q", o.nominated, p.NominatedNode)
	}
	if !slices.Equal(o.deleted, predVictims) {
		t.Errorf("scheduler deleted %v, plugin predicted %v", o.deleted, predVictims)
	}
	if !slices.Equal(o.preempted, o.deleted) {
		t.Errorf("pods with DisruptionTarget PreemptionByScheduler %v, deleted %v", o.preempted, o.deleted)
	}
	if !s.wantEligible && !strings.Contains(o.unscheduled, "preemptionPolicy=Never") {
		t.Errorf("the scheduler's message does not name preemptionPolicy=Never: %q", o.unscheduled)
	}
}

func preemptWantNode(s preemptScenario) string {
	if s.wantNode == "" {
		return ""
	}
	return s.nodeName(s.wantNode)
}

// preemptWantVictims: namespace/name, as the plugin's victims say them;
// a victim is the one running pod of its name on the wanted node.
func preemptWantVictims(s preemptScenario) []string {
	out := []string{}
	for _, v := range s.wantVictims {
		i := slices.IndexFunc(s.running, func(r preemptRunning) bool { return r.name == v && r.node == s.wantNode })
		out = append(out, s.runningNS(s.running[i])+"/"+v)
	}
	slices.Sort(out)
	return out
}

func (s preemptScenario) runningNS(r preemptRunning) string {
	if r.elsewhere {
		return s.otherNS()
	}
	return s.ns()
}

// preemptCleanup deletes what would change later tests: the nodes (the
// plugin reads them cluster-wide), the pending pods and the classes.
// Bound pods stay, as other tests' pods do.
func preemptCleanup(admin kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range preemptScenarios {
		_ = admin.CoreV1().Pods(s.ns()).Delete(ctx, preemptPendingName, metav1.DeleteOptions{})
		for short := range s.nodes {
			_ = admin.CoreV1().Nodes().Delete(ctx, s.nodeName(short), metav1.DeleteOptions{})
		}
	}
	for _, pc := range preemptClasses {
		_ = admin.SchedulingV1().PriorityClasses().Delete(ctx, pc.name, metav1.DeleteOptions{})
	}
}
