package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// updateEvent is one pod event the recorder saw: create, bind, delete
// (deletionTimestamp set), gone, ready or unready.
type updateEvent struct {
	at   time.Time
	what string
	pod  string // namespace/name
	uid  types.UID
	node string
}

// updatePod is the recorder's view of one pod.
type updatePod struct {
	key         string
	old         bool // in the snapshot taken before the rollout
	node        string
	ready       bool
	readySince  time.Time
	terminating bool
	gone        bool
	labels      map[string]string
	target      string // a daemon pod's node (its node affinity), bound or not
}

// updateRecorder watches the namespace's pods from the snapshot's
// resourceVersion and keeps every event in order.
type updateRecorder struct {
	pods     map[types.UID]*updatePod
	events   []updateEvent
	snapshot []corev1.Pod
	minReady time.Duration
	// newNeverReady: the rollout's revision never turns Ready.
	newNeverReady bool
	pdbs          map[string]pdbWatch
	// the lowest numbers seen at any event: available (Ready for
	// minReadySeconds) and Ready pods of the workload; per PDB, healthy
	// pods it selects.
	availableMin, readyMin int
	pdbMin                 map[string]int
}

type pdbWatch struct {
	selector       map[string]string
	desiredHealthy int
}

func newUpdateRecorder(ctx context.Context, c kubernetes.Interface, s *updateScenario) (*updateRecorder, string, error) {
	list, err := c.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	r := &updateRecorder{pods: map[types.UID]*updatePod{}, snapshot: list.Items, pdbs: map[string]pdbWatch{}, pdbMin: map[string]int{},
		minReady: time.Duration(s.minReadySeconds) * time.Second, newNeverReady: s.newNeverReady}
	for i := range list.Items {
		p := &list.Items[i]
		r.pods[p.UID] = &updatePod{key: podKey(p), old: true, node: p.Spec.NodeName, ready: drainPodReady(p), readySince: readySince(p),
			terminating: p.DeletionTimestamp != nil, labels: p.Labels}
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	for _, p := range pdbs.Items {
		r.pdbs[s.ns+"/"+p.Name] = pdbWatch{selector: p.Spec.Selector.MatchLabels, desiredHealthy: int(p.Status.DesiredHealthy)}
	}
	r.availableMin, r.readyMin = r.counts(time.Now())
	for name := range r.pdbs {
		r.pdbMin[name] = r.pdbHealthy(name)
	}
	return r, list.ResourceVersion, nil
}

func readySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// counts are the workload's available and Ready pods at t (terminating
// pods are neither, as for the controllers and the disruption controller).
func (r *updateRecorder) counts(t time.Time) (available, ready int) {
	for _, p := range r.pods {
		if p.gone || p.terminating || !p.ready {
			continue
		}
		ready++
		if !p.readySince.Add(r.minReady).After(t) {
			available++
		}
	}
	return available, ready
}

func (r *updateRecorder) pdbHealthy(name string) int {
	n := 0
	for _, p := range r.pods {
		if p.gone || p.terminating || !p.ready || !matches(r.pdbs[name].selector, p.labels) {
			continue
		}
		n++
	}
	return n
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// apply folds one watch event into the view and the event list.
func (r *updateRecorder) apply(ev watch.Event) {
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	st := r.pods[p.UID]
	add := func(what, node string) {
		r.events = append(r.events, updateEvent{at: now, what: what, pod: podKey(p), uid: p.UID, node: node})
	}
	if st == nil {
		st = &updatePod{key: podKey(p), labels: p.Labels, target: dsTarget(p)}
		r.pods[p.UID] = st
		add("create", "")
	}
	if ev.Type == watch.Deleted {
		if !st.terminating {
			add("delete", st.node)
		}
		st.terminating, st.gone = true, true
		add("gone", st.node)
		r.track(now)
		return
	}
	if st.node == "" && p.Spec.NodeName != "" {
		st.node = p.Spec.NodeName
		add("bind", st.node)
	}
	if !st.terminating && p.DeletionTimestamp != nil {
		st.terminating = true
		add("delete", st.node)
	}
	if ready := drainPodReady(p); ready != st.ready {
		st.ready, st.readySince = ready, readySince(p)
		add(map[bool]string{true: "ready", false: "unready"}[ready], st.node)
	}
	st.labels = p.Labels
	r.track(now)
}

// track lowers the minima; they can only drop at an event.
func (r *updateRecorder) track(now time.Time) {
	a, rd := r.counts(now)
	r.availableMin, r.readyMin = min(r.availableMin, a), min(r.readyMin, rd)
	for name := range r.pdbs {
		r.pdbMin[name] = min(r.pdbMin[name], r.pdbHealthy(name))
	}
}

func (r *updateRecorder) lastEvent() time.Time {
	if len(r.events) == 0 {
		return time.Time{}
	}
	return r.events[len(r.events)-1].at
}

// updateObserved is what the real rollout did.
type updateObserved struct {
	outcome    string     // completes | stalls
	backOff    bool       // stalled while the quota had room: the ReplicaSet controller waits out its back-off after refused creations
	victims    []string   // snapshot pods deleted, in order
	batches    [][]string // the victims, grouped by deletion time (a gap of over batchGap starts a new group)
	remaining  []string   // snapshot pods never deleted
	newDeleted []string   // pods created by the rollout and deleted again
	created    []updateCreated
	took       time.Duration
	rec        *updateRecorder
}

type updateCreated struct {
	pod  string
	node string // "" never bound
}

// A controller's pass deletes at once; the next waits for a pod to turn
// Ready or to be gone. So a Ready or gone event between two deletions
// starts a new pass (timing-free: the machine may be loaded).
func passBreak(what string) bool { return what == "ready" || what == "gone" }

func (r *updateRecorder) observed(complete bool, took time.Duration) *updateObserved {
	o := &updateObserved{outcome: "stalls", took: took, rec: r}
	if complete {
		o.outcome = "completes"
	}
	newPass := true
	for _, ev := range r.events {
		st := r.pods[ev.uid]
		switch {
		case passBreak(ev.what):
			newPass = true
		case ev.what == "delete" && st.old:
			o.victims = append(o.victims, ev.pod)
			if newPass {
				o.batches = append(o.batches, nil)
				newPass = false
			}
			o.batches[len(o.batches)-1] = append(o.batches[len(o.batches)-1], ev.pod)
		case ev.what == "delete":
			o.newDeleted = append(o.newDeleted, ev.pod)
		case ev.what == "create":
			o.created = append(o.created, updateCreated{pod: ev.pod})
		case ev.what == "bind" && !st.old:
			for i := range o.created {
				if o.created[i].pod == ev.pod && o.created[i].node == "" {
					o.created[i].node = ev.node
				}
			}
		}
	}
	for _, p := range r.snapshot {
		if st := r.pods[p.UID]; !st.terminating {
			o.remaining = append(o.remaining, st.key)
		}
	}
	sort.Strings(o.remaining)
	return o
}

func (o *updateObserved) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "real: %s in %s; deleted %v in passes %v; remaining %v; created", o.outcome, o.took.Round(time.Millisecond), o.victims, o.batches, o.remaining)
	for _, c := range o.created {
		fmt.Fprintf(&b, " %s->%q", c.pod, c.node)
	}
	fmt.Fprintf(&b, "; available min %d, Ready min %d", o.rec.availableMin, o.rec.readyMin)
	for name, w := range o.rec.pdbs {
		fmt.Fprintf(&b, "; %s healthy min %d of %d", name, o.rec.pdbMin[name], w.desiredHealthy)
	}
	if len(o.newDeleted) > 0 {
		fmt.Fprintf(&b, "; new pods deleted again %v", o.newDeleted)
	}
	return b.String()
}

// record watches until the rollout completes (and 1 s more), or nothing
// has happened for quiet, or limit has passed.
func (s *updateScenario) record(ctx context.Context, c kubernetes.Interface, r *updateRecorder, rv string, start func() error, quiet, limit time.Duration) (*updateObserved, error) {
	w, err := c.CoreV1().Pods(s.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	began := time.Now()
	if err := start(); err != nil {
		return nil, err
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var doneAt time.Time
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("pod watch closed after %d events", len(r.events))
			}
			r.apply(ev)
		case <-tick.C:
			now := time.Now()
			if doneAt.IsZero() && s.complete(ctx, c, r) {
				doneAt = now
			}
			last := r.lastEvent()
			if last.IsZero() {
				last = began
			}
			switch {
			case !doneAt.IsZero() && now.Sub(doneAt) >= time.Second:
				return r.observed(true, doneAt.Sub(began)), nil
			case doneAt.IsZero() && (now.Sub(last) >= quiet || now.Sub(began) >= limit):
				return r.observed(false, last.Sub(began)), nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// complete says whether the controller has finished the rollout: its
// status shows every targeted pod updated and available, and no pod of the
// namespace is still terminating.
func (s *updateScenario) complete(ctx context.Context, c kubernetes.Interface, r *updateRecorder) bool {
	for _, p := range r.pods {
		if p.terminating && !p.gone {
			return false
		}
	}
	switch s.kind {
	case "Deployment":
		d, err := c.AppsV1().Deployments(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation {
			return false
		}
		want := *d.Spec.Replicas
		st := d.Status
		return st.UpdatedReplicas == want && st.Replicas == want && st.AvailableReplicas == want
	case "StatefulSet":
		d, err := c.AppsV1().StatefulSets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation {
			return false
		}
		return s.statefulUpdated(r, d.Status.UpdateRevision)
	case "DaemonSet":
		d, err := c.AppsV1().DaemonSets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation {
			return false
		}
		st := d.Status
		return st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.NumberAvailable == st.DesiredNumberScheduled &&
			st.CurrentNumberScheduled == st.DesiredNumberScheduled
	}
	return false
}

// statefulUpdated: every ordinal at or above the partition runs the update
// revision and is Ready, and every ordinal exists.
func (s *updateScenario) statefulUpdated(r *updateRecorder, updateRev string) bool {
	live := 0
	for _, p := range r.pods {
		if p.gone {
			continue
		}
		live++
		_, name, _ := strings.Cut(p.key, "/")
		if statefulOrdinal(name) >= int(s.partition) && (p.labels[appsv1.ControllerRevisionHashLabelKey] != updateRev || !p.ready) {
			return false
		}
	}
	return live == s.replicas
}

// quotaRoom says whether every quota of the namespace has room for one
// more pod of the scenario: a rollout stalled then only waits for the
// ReplicaSet controller's back-off after refused creations (up to 1000 s),
// so its outcome is a matter of time, not of the cluster.
func (s *updateScenario) quotaRoom(ctx context.Context, c kubernetes.Interface) (bool, error) {
	quotas, err := c.CoreV1().ResourceQuotas(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for _, q := range quotas.Items {
		for name, hard := range q.Status.Hard {
			used := q.Status.Used[name]
			need := resource.NewQuantity(1, resource.DecimalSI)
			if name == corev1.ResourceRequestsCPU {
				need = resource.NewMilliQuantity(s.milliCPU, resource.DecimalSI)
			}
			used.Add(*need)
			if used.Cmp(hard) > 0 {
				return false, nil
			}
		}
	}
	return len(quotas.Items) > 0, nil
}
