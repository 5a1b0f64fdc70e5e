package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

const outageExcludeLabel = "node.kubernetes.io/exclude-disruption"

// setUp is the drain's set-up with zone-labelled nodes, and waits until the
// node lifecycle controller has removed every node's not-ready taint.
func (s *outageScenario) setUp(ctx context.Context, c kubernetes.Interface) error {
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, w := range s.workloads {
		if err := s.createWorkload(ctx, c, w); err != nil {
			return fmt.Errorf("create %s %s: %w", w.kind, w.name, err)
		}
	}
	if err := s.bindAll(ctx, c); err != nil {
		return err
	}
	for _, n := range s.nodes {
		if err := outageCreateNode(ctx, c, n); err != nil {
			return fmt.Errorf("create node %s: %w", n.name, err)
		}
	}
	for _, p := range s.pdbs {
		if _, err := c.PolicyV1().PodDisruptionBudgets(s.ns).Create(ctx, p.object(s.ns), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PDB %s: %w", p.name, err)
		}
	}
	if err := s.waitSettled(ctx, c); err != nil {
		return err
	}
	return pollUntil(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, n := range nodes.Items {
			if len(n.Spec.Taints) > 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

func outageCreateNode(ctx context.Context, c kubernetes.Interface, n outageNode) error {
	res := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(n.milliCPU, resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	labels := map[string]string{corev1.LabelHostname: n.name, corev1.LabelTopologyZone: n.zone}
	if n.exclude {
		labels[outageExcludeLabel] = ""
	}
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}}},
	}
	_, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	return err
}

// outageObserved is what the control plane did after the failure at t0.
type outageObserved struct {
	t0      time.Time
	tainted map[string]time.Duration // node -> first NoExecute unreachable/not-ready taint
	taintAt map[string]bool          // node -> carries it at the end
	deleted map[string]time.Duration // ns/name of a snapshot pod -> deletionTimestamp first seen
	before  map[string]corev1.Pod    // the snapshot, by ns/name
	created map[string]corev1.Pod    // pods created after t0, as at the end, by ns/name
	zones   map[string]string        // zone -> last state the controller logged after t0
	allDown bool                     // "Entering master disruption mode" after t0
	events  []string                 // the record, in order, for the log
}

// outageWatch lists the scenario's pods and every node, then watches both.
type outageWatch struct {
	c          kubernetes.Interface
	ns         string
	pods       watch.Interface
	nodes      watch.Interface
	logPath    string
	logOffset  int64
	before     map[string]corev1.Pod
	nodeTaints map[string]bool
}

func startOutageWatch(ctx context.Context, c kubernetes.Interface, ns, kcmLog string) (*outageWatch, error) {
	w := &outageWatch{c: c, ns: ns, logPath: kcmLog, before: map[string]corev1.Pod{}, nodeTaints: map[string]bool{}}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		w.before[p.Namespace+"/"+p.Name] = p
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if w.pods, err = c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: pods.ResourceVersion}); err != nil {
		return nil, err
	}
	if w.nodes, err = c.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: nodes.ResourceVersion}); err != nil {
		w.pods.Stop()
		return nil, err
	}
	if st, err := os.Stat(kcmLog); err == nil {
		w.logOffset = st.Size()
	}
	return w, nil
}

func outageNoExecute(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute && (t.Key == corev1.TaintNodeUnreachable || t.Key == corev1.TaintNodeNotReady) {
			return true
		}
	}
	return false
}

// record takes every event until nothing has changed for quiet (and at
// least minRun has passed since t0), or until the context ends.
func (w *outageWatch) record(ctx context.Context, t0 time.Time, minRun, quiet time.Duration) (*outageObserved, error) {
	defer w.pods.Stop()
	defer w.nodes.Stop()
	o := &outageObserved{t0: t0, tainted: map[string]time.Duration{}, taintAt: map[string]bool{}, deleted: map[string]time.Duration{},
		before: w.before, created: map[string]corev1.Pod{}, zones: map[string]string{}}
	last := t0
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return o, fmt.Errorf("still changing when the scenario timed out: %w", ctx.Err())
		case ev, ok := <-w.pods.ResultChan():
			if !ok {
				return o, fmt.Errorf("the pod watch closed")
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && o.pod(ev.Type, p) {
				last = time.Now()
			}
		case ev, ok := <-w.nodes.ResultChan():
			if !ok {
				return o, fmt.Errorf("the node watch closed")
			}
			if n, isNode := ev.Object.(*corev1.Node); isNode && o.node(w, n) {
				last = time.Now()
			}
		case <-tick.C:
			if time.Since(t0) >= minRun && time.Since(last) >= quiet {
				o.zones, o.allDown = outageZoneLog(w.logPath, w.logOffset)
				return o, nil
			}
		}
	}
}

func (o *outageObserved) since() time.Duration { return time.Since(o.t0) }

func (o *outageObserved) logEvent(format string, args ...any) {
	o.events = append(o.events, fmt.Sprintf("T+%5.1fs ", o.since().Seconds())+fmt.Sprintf(format, args...))
}

// pod records a snapshot pod's deletion and a new pod's creation and
// binding; true when something changed.
func (o *outageObserved) pod(typ watch.EventType, p *corev1.Pod) bool {
	key := p.Namespace + "/" + p.Name
	old, inSnapshot := o.before[key]
	if inSnapshot && old.UID == p.UID {
		if _, seen := o.deleted[key]; !seen && (p.DeletionTimestamp != nil || typ == watch.Deleted) {
			o.deleted[key] = o.since()
			o.logEvent("deleted %s (on %s)", key, p.Spec.NodeName)
			return true
		}
		return false
	}
	prev, seen := o.created[key]
	if typ == watch.Deleted {
		delete(o.created, key)
		return seen
	}
	o.created[key] = *p
	switch {
	case !seen:
		o.logEvent("created %s", key)
	case prev.Spec.NodeName == "" && p.Spec.NodeName != "":
		o.logEvent("bound %s to %s", key, p.Spec.NodeName)
	default:
		return false
	}
	return true
}

func (o *outageObserved) node(w *outageWatch, n *corev1.Node) bool {
	now := outageNoExecute(n)
	if now == w.nodeTaints[n.Name] {
		return false
	}
	w.nodeTaints[n.Name] = now
	o.taintAt[n.Name] = now
	if now {
		if _, seen := o.tainted[n.Name]; !seen {
			o.tainted[n.Name] = o.since()
		}
		o.logEvent("tainted %s %v", n.Name, n.Spec.Taints)
	} else {
		o.logEvent("untainted %s", n.Name)
	}
	return true
}

var outageZoneLine = regexp.MustCompile(`zone="([^"]*)" newState="(\w+)"`)

// outageZoneLog reads the controller-manager's zone transitions after
// offset: the zone key is region:\x00:zone, logged quoted.
func outageZoneLog(path string, offset int64) (map[string]string, bool) {
	zones := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return zones, false
	}
	allDown := false
	for _, line := range strings.Split(string(b[offset:]), "\n") {
		switch {
		case strings.Contains(line, "Entering master disruption mode"):
			allDown = true
		case strings.Contains(line, "Exiting master disruption mode"):
			allDown = false
		}
		if m := outageZoneLine.FindStringSubmatch(line); m != nil {
			z := m[1]
			z = z[strings.LastIndex(z, ":")+1:]
			zones[z] = m[2]
		}
	}
	return zones, allDown
}
