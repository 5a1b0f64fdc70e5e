package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// drainNodeObserved is what the real `kubectl drain` did to one node.
type drainNodeObserved struct {
	node      string
	outcome   string // drained | blocked | refused
	evicted   []string
	remaining []string
	skipped   []string
	err       string
}

// drainBefore is the cluster just before the drain, and kubectl's pod
// selection on each drained node (pods matching --pod-selector), split the
// way kubectl's filters (k8s.io/kubectl pkg/drain, filters.go) split the
// kinds of pods the scenarios make; observeDrain checks that split against
// kubectl's own warnings and errors.
type drainBefore struct {
	pods    map[types.UID]corev1.Pod
	acted   map[string][]corev1.Pod // evicted or deleted by a drain that runs
	skipped map[string][]string     // DaemonSet pods under --ignore-daemonsets
	refuse  map[string][]string     // pods a filter refuses (the node is refused)
}

type drainFlags struct {
	ignoreDaemonSets, deleteEmptyDir, force bool
	podSelector                             string
}

func parseDrainFlags(flags []string) drainFlags {
	var f drainFlags
	for _, fl := range flags {
		switch {
		case fl == "--ignore-daemonsets":
			f.ignoreDaemonSets = true
		case fl == "--delete-emptydir-data":
			f.deleteEmptyDir = true
		case fl == "--force":
			f.force = true
		case strings.HasPrefix(fl, "--pod-selector="):
			f.podSelector = strings.TrimPrefix(fl, "--pod-selector=")
		}
	}
	return f
}

func drainSnapshotBefore(ctx context.Context, c kubernetes.Interface, s *drainScenario) (*drainBefore, error) {
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	f := parseDrainFlags(s.flags)
	sel, err := labels.Parse(f.podSelector)
	if err != nil {
		return nil, err
	}
	b := &drainBefore{pods: map[types.UID]corev1.Pod{}, acted: map[string][]corev1.Pod{}, skipped: map[string][]string{}, refuse: map[string][]string{}}
	for _, p := range pods.Items {
		b.pods[p.UID] = p
	}
	for _, p := range pods.Items {
		if !slices.Contains(s.drain, p.Spec.NodeName) || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		switch n := p.Spec.NodeName; drainFilter(&p, f) {
		case "skip":
			b.skipped[n] = append(b.skipped[n], podKey(&p))
		case "refuse":
			b.refuse[n] = append(b.refuse[n], podKey(&p))
		default:
			b.acted[n] = append(b.acted[n], p)
		}
	}
	return b, nil
}

// drainFilter is kubectl's filter chain for the scenarios' pods (no mirror
// pods, none terminating, none finished): DaemonSet, local storage,
// unreplicated, in that order.
func drainFilter(p *corev1.Pod, f drainFlags) string {
	ref := metav1.GetControllerOf(p)
	switch {
	case ref != nil && ref.Kind == "DaemonSet" && f.ignoreDaemonSets:
		return "skip"
	case ref != nil && ref.Kind == "DaemonSet":
		return "refuse"
	case drainHasEmptyDir(p) && !f.deleteEmptyDir:
		return "refuse"
	case ref == nil && !f.force:
		return "refuse"
	}
	return "act"
}

func drainHasEmptyDir(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.EmptyDir != nil })
}

// runKubectlDrain runs the real kubectl drain as admin.
func runKubectlDrain(ctx context.Context, kubectl, kubeconfig string, s *drainScenario, timeout time.Duration) (stdout, stderr string, code int, d time.Duration, err error) {
	args := append([]string{"drain"}, s.drain...)
	args = append(args, s.flags...)
	args = append(args, fmt.Sprintf("--timeout=%s", timeout), "--kubeconfig", kubeconfig)
	cctx, cancel := context.WithTimeout(ctx, time.Duration(len(s.drain))*timeout+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, kubectl, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	runErr := cmd.Run()
	d = time.Since(start)
	if ee, ok := runErr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if runErr != nil {
		return out.String(), errb.String(), -1, d, fmt.Errorf("kubectl drain: %w", runErr)
	}
	return out.String(), errb.String(), code, d, nil
}

var drainNodeErrRE = regexp.MustCompile(`(?s)error: unable to drain node "([^"]+)" due to error: (.*?), continuing command\.\.\.`)

// observeDrain classifies each node from kubectl's messages and the pods
// that were there before: refused when kubectl's filters stopped it before
// any eviction ("cannot delete ..."), blocked when it failed later (its
// --timeout, or an eviction error) with pods left, drained otherwise.
func observeDrain(ctx context.Context, c kubernetes.Interface, s *drainScenario, before *drainBefore, stderr string) ([]drainNodeObserved, error) {
	failed := map[string]string{}
	for _, m := range drainNodeErrRE.FindAllStringSubmatch(stderr, -1) {
		failed[m[1]] = m[2]
	}
	now, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	live := map[types.UID]bool{}
	for _, p := range now.Items {
		if p.DeletionTimestamp == nil {
			live[p.UID] = true
		}
	}
	var out []drainNodeObserved
	for _, n := range s.drain {
		o := drainNodeObserved{node: n, outcome: "drained", err: failed[n], skipped: sorted(before.skipped[n])}
		for _, p := range before.acted[n] {
			if live[p.UID] {
				o.remaining = append(o.remaining, podKey(&p))
			} else {
				o.evicted = append(o.evicted, podKey(&p))
			}
		}
		switch {
		case o.err == "":
		case strings.Contains(o.err, "cannot delete"):
			o.outcome = "refused"
			// kubectl acted on nothing: every pod it would act on remains.
			o.remaining = sorted(append(o.remaining, before.refuse[n]...))
		default:
			o.outcome = "blocked"
		}
		sort.Strings(o.evicted)
		sort.Strings(o.remaining)
		out = append(out, o)
	}
	return out, nil
}

// drainSplitMismatch checks the test's split of each node's pods against
// kubectl's own words: refused pods are named in its error, skipped
// DaemonSet pods in its warning, and a node with refused pods is refused.
func drainSplitMismatch(o drainNodeObserved, before *drainBefore, stderr string) string {
	refuse := before.refuse[o.node]
	if (len(refuse) > 0) != (o.outcome == "refused") {
		return fmt.Sprintf("%s: test expected refused pods %v, kubectl's outcome is %s", o.node, refuse, o.outcome)
	}
	for _, k := range refuse {
		if !strings.Contains(o.err, k) {
			return fmt.Sprintf("%s: kubectl's error does not name %s: %s", o.node, k, o.err)
		}
	}
	if o.outcome == "refused" {
		return ""
	}
	for _, k := range o.skipped {
		if !strings.Contains(stderr, k) {
			return fmt.Sprintf("%s: kubectl's warnings do not name skipped %s", o.node, k)
		}
	}
	return ""
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// observeReplacements waits until the evicted pods' owners have created
// and the scheduler has decided (bound or Unschedulable) as many new pods
// as pods were evicted from them, or until the deadline (a Job's
// replacement waits out its back-off, about 10 s).
func observeReplacements(ctx context.Context, c kubernetes.Interface, before *drainBefore, evicted []string, wait time.Duration) (map[string][]string, error) {
	want := map[string]int{}
	byKey := map[string]corev1.Pod{}
	for _, p := range before.pods {
		byKey[podKey(&p)] = p
	}
	for _, k := range evicted {
		p := byKey[k]
		if owner := drainOwner(&p); owner != "" && !strings.HasPrefix(owner, "DaemonSet/") {
			want[owner]++
		}
	}
	var got map[string][]string
	deadline := time.Now().Add(wait)
	for {
		pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		got = drainNewPods(pods.Items, before)
		done := true
		for owner, n := range want {
			if len(got[owner]) < n {
				done = false
			}
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	return got, nil
}

// drainNewPods: per owner, the node of each pod that did not exist before
// and that the scheduler has decided on ("" when Unschedulable).
func drainNewPods(pods []corev1.Pod, before *drainBefore) map[string][]string {
	got := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		if _, old := before.pods[p.UID]; old || p.DeletionTimestamp != nil {
			continue
		}
		owner := drainOwner(p)
		switch {
		case owner == "":
		case p.Spec.NodeName != "":
			got[owner] = append(got[owner], p.Spec.NodeName)
		case drainUnschedulable(p):
			got[owner] = append(got[owner], "")
		}
	}
	for _, nodes := range got {
		sort.Strings(nodes)
	}
	return got
}

func drainUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// drainOwner names a pod's controller as Kind/namespace/name, the
// ReplicaSet standing for its pods (Deployment pods included).
func drainOwner(p *corev1.Pod) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return ""
	}
	return ref.Kind + "/" + p.Namespace + "/" + ref.Name
}
