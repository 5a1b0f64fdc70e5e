package outage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// jobBackOff is the Job controller's first failure back-off
// (DefaultJobPodFailureBackOff): a deleted pod counts as failed.
const jobBackOff = 10

// unblock says what ends a stuck Terminating pod (pkg/controller/podgc).
const unblock = "delete the Node (pod GC then deletes its pods), or taint it node.kubernetes.io/out-of-service=nodeshutdown:NoExecute " +
	"(pod GC force-deletes its terminating pods), or force-delete the pod"

// afterDelete: the pod is deleted; what its controller makes of it.
func (s *sim) afterDelete(p *corev1.Pod, pr PodResult) PodResult {
	ref := metav1.GetControllerOfNoCopy(p)
	switch {
	case ref == nil:
		pr.Reason = "no controller: deleted and never replaced (lost)"
	case disruption.Finished(p):
		pr.Reason = "finished: nothing replaces it"
	case ref.Kind == "DaemonSet":
		pr.Reason = "DaemonSet pod lacking the DaemonSet controller's tolerations: deleted, not made elsewhere"
	case ref.Kind == "StatefulSet":
		return s.stuck(pr, "the StatefulSet makes no new pod of that name until the object is gone")
	case ref.Kind == "Job" && s.waitsForFailed(p, ref):
		return s.stuck(pr, "the Job's podReplacementPolicy is Failed: no new pod until this one is Failed or gone")
	}
	return pr
}

// stuck: the DELETE leaves the pod Terminating, since no kubelet confirms.
func (s *sim) stuck(pr PodResult, why string) PodResult {
	pr.Fate, pr.Terminating, pr.Deleted = FateStuck, pr.Deleted, nil
	pr.Reason = fmt.Sprintf("stuck Terminating from T+%s..%ss: no kubelet confirms the deletion, and %s; to unblock: %s",
		secs(pr.Terminating.Min), secs(pr.Terminating.Max), why, unblock)
	if s.in.Settings.Condition == ConditionNotReady {
		pr.Certain = false
		pr.Reason += " (a not-ready kubelet that still runs may complete the deletion)"
	}
	return pr
}

// waitsForFailed: the Job keeps podReplacementPolicy Failed (set, or
// defaulted so by a podFailurePolicy) and the API server keeps the field.
func (s *sim) waitsForFailed(p *corev1.Pod, ref *metav1.OwnerReference) bool {
	j, ok := s.owners.Get(p.Namespace, ref).(*batchv1.Job)
	if !ok || !s.in.Settings.JobReplacementPolicy {
		return false
	}
	if pol := j.Spec.PodReplacementPolicy; pol != nil {
		return *pol == batchv1.Failed
	}
	return j.Spec.PodFailurePolicy != nil
}

// follower is the controllers' and the scheduler's work after deletions.
type follower struct {
	s      *sim
	ahead  <-chan viewBuilt // the first view, built beside the fates
	view   *scheduling.View
	alike  *scheduling.Alike // places in view
	active map[types.UID]int
	owned  map[ownedKey]int // activeCounts
	choice bool             // an earlier replacement had several feasible nodes
	// nowhere: per owner, the placement of its last replacement when it
	// fit nowhere, and binds then. With no bind since, the next one of the
	// same template meets the same filters on the same nodes: the same
	// answer (a failed zone's 50,000 replacements on full nodes). With
	// binds since, a pod whose filters only fail more as pods are added
	// (monotone) still fits nowhere; its FitError is then the first one's.
	nowhere map[types.UID]memo
	binds   int
	made    []made                 // the replacements' pods (orderDoubts)
	bases   map[string]*corev1.Pod // newPod's, per template key
}

type memo struct {
	pl    scheduling.Placement
	binds int
}

// follow creates the replacements, in deletion order, and places them
// in the view built ahead.
func (s *sim) follow(ahead <-chan viewBuilt) {
	order := slices.Clone(s.dels)
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := s.res.Pods[a].Deleted, s.res.Pods[b].Deleted
		if x == nil || y == nil {
			return cmp.Compare(boolInt(x == nil), boolInt(y == nil))
		}
		return cmp.Or(cmp.Compare(x.Min, y.Min), cmp.Compare(x.Max, y.Max))
	})
	f := &follower{s: s, ahead: ahead, active: map[types.UID]int{}, nowhere: map[types.UID]memo{}, bases: map[string]*corev1.Pod{}}
	for _, i := range order {
		pr, p := &s.res.Pods[i], s.podObjs[i]
		if pr.Fate != FateDeleted || disruption.Finished(p) {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.Kind != "DaemonSet" {
			f.replace(pr, p, ref)
		}
	}
	f.orderDoubts()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// replace: the owner creates a pod for p if it wants one, and the
// scheduler places it.
func (f *follower) replace(pr *PodResult, p *corev1.Pod, ref *metav1.OwnerReference) {
	s := f.s
	owner := s.owners.Get(p.Namespace, ref)
	tmpl, ok := disruption.Template(owner)
	r := Replacement{For: pr.Pod, Owner: pr.Owner, At: *pr.Deleted, Certain: true}
	switch {
	case !ok && disruption.ModelledKind(ref) && s.in.OwnersRead[ref.Kind]:
		pr.Reason = appendReason(pr.Reason, fmt.Sprintf("its owner %s does not exist: nothing replaces it", pr.Owner))
		return
	case !ok && !disruption.ModelledKind(ref):
		pr.Certain = false
		s.doubt(fmt.Sprintf("the owner %s of pods on the failed nodes is not a kind the plugin models: whether they are replaced is unknown", pr.Owner))
		return
	case !ok:
		r.Certain, pr.Certain = false, false
		s.doubt(fmt.Sprintf("the owner %s of pods on the failed nodes is not in the snapshot: assumed it replaces them with the same spec", pr.Owner))
		tmpl = corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	case !f.wantsMore(p, ref, owner):
		pr.Reason = appendReason(pr.Reason, fmt.Sprintf("%s already has the pods it wants: no replacement", pr.Owner))
		return
	}
	pr.Replaced = true
	if pr.Reason == "" {
		pr.Reason = "replaced by " + pr.Owner + " as soon as it is terminating"
	}
	if ref.Kind == "Job" {
		r.At.Max += jobBackOff
		r.Reason = "created after the Job controller's back-off (10 s for a first failure)"
		pr.Reason = "replaced by " + pr.Owner + " after its back-off (a deleted pod counts as failed)"
	}
	key := string(ref.UID)
	if !ok {
		key += "/" + string(p.UID) // the old pod's own spec: alike to no other
	}
	pod := f.newPod(p, tmpl, key, len(s.res.Replacements)+1)
	f.place(&r, pod, ref.UID, key)
	s.res.Replacements = append(s.res.Replacements, r)
	f.made = append(f.made, made{pod: pod, owner: ref.UID, key: key})
}

// wantsMore: a ReplicaSet or ReplicationController counts its active pods
// (not terminating, not finished: FilterActivePods) against
// spec.replicas; a Job that has not finished replaces its pod.
func (f *follower) wantsMore(p *corev1.Pod, ref *metav1.OwnerReference, owner metav1.Object) bool {
	want, counted, replaces := disruption.ActiveWanted(owner)
	if !counted {
		return replaces
	}
	n, ok := f.active[owner.GetUID()]
	if !ok {
		n = f.activeCounts()[ownedKey{p.Namespace, owner.GetUID()}]
	}
	n-- // p is terminating now
	more := n < int(want)
	if more {
		n++
	}
	f.active[owner.GetUID()] = n
	return more
}

type ownedKey struct {
	ns  string
	uid types.UID
}

// activeCounts are the active pods (not terminating, not finished) of each
// controller in each namespace, counted in one pass over the pods (not one
// per owner).
func (f *follower) activeCounts() map[ownedKey]int {
	if f.owned == nil {
		f.owned = map[ownedKey]int{}
		for _, q := range f.s.in.Pods {
			if ref := metav1.GetControllerOfNoCopy(q); ref != nil && q.DeletionTimestamp == nil && !disruption.Finished(q) {
				f.owned[ownedKey{q.Namespace, ref.UID}]++
			}
		}
	}
	return f.owned
}

// newPod is the replacement as its controller creates it, Pending: a
// shallow copy of the template's pod, deep-copied once per key (nothing
// changes a pod's nested fields; a zone's 50,000 replacements).
func (f *follower) newPod(old *corev1.Pod, tmpl corev1.PodTemplateSpec, key string, n int) *corev1.Pod {
	base := f.bases[key]
	if base == nil {
		base = &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
		f.bases[key] = base
	}
	cp := *base
	pod := &cp
	pod.Namespace, pod.OwnerReferences = old.Namespace, old.OwnerReferences
	pod.Spec.NodeName, pod.Spec.Priority, pod.Spec.PreemptionPolicy = "", old.Spec.Priority, old.Spec.PreemptionPolicy
	pod.Name, pod.UID = fmt.Sprintf("%s (replacement %d)", old.Name, n), ""
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	return pod
}

// place runs the scheduler's filters for pod over the nodes as they are
// then (failed ones tainted) and binds it to the likeliest feasible node.
// Pods of one key are alike (scheduling.Alike).
func (f *follower) place(r *Replacement, pod *corev1.Pod, owner types.UID, key string) {
	if m, ok := f.nowhere[owner]; ok && owner != "" && (m.binds == f.binds || monotone(pod)) {
		r.Reason = appendReason(m.pl.FitError, r.Reason)
		f.unplaced(r, m.pl)
		return
	}
	if f.view == nil {
		v, err := f.newView()
		if err != nil {
			r.Certain, r.Reason = false, err.Error()
			f.s.doubt(fmt.Sprintf("the replacement of %s: %v", r.For, err))
			return
		}
		f.view, f.alike = v, scheduling.NewAlike(v)
	}
	pl, node, err := f.alike.Place(pod, key)
	if err != nil {
		r.Certain, r.Reason = false, err.Error()
		f.s.doubt(fmt.Sprintf("the replacement of %s: %v", r.For, err))
		return
	}
	for _, u := range pl.Unmodelled {
		r.Certain = false
		f.s.doubt(fmt.Sprintf("replacements of %s: %s", r.Owner, u))
	}
	r.Candidates = pl.Feasible
	if len(pl.Feasible) == 0 {
		r.Reason = appendReason(pl.FitError, r.Reason)
		f.nowhere[owner] = memo{pl: pl, binds: f.binds}
		f.unplaced(r, pl)
		return
	}
	f.binds++
	if len(pl.Feasible) > 1 {
		r.Certain, f.choice = false, true
	}
	r.Node = node
	pod.Spec.NodeName = r.Node
	pod.Status.Phase = corev1.PodRunning
	if err := f.view.Add(pod); err != nil {
		f.view = nil // rebuilt at the next placement, which then meets the error
	}
}

// viewBuilt is a view built, or why not.
type viewBuilt struct {
	v   *scheduling.View
	err error
}

// viewAhead builds the scheduler's view in a goroutine of its own, beside
// the taint eviction controller's pass: it reads only the input.
func (s *sim) viewAhead() <-chan viewBuilt {
	out := make(chan viewBuilt, 1)
	go func() {
		v, err := scheduling.NewView(s.schedNodes(), s.in.Pods, s.in.Namespaces, s.in.Scheduler)
		out <- viewBuilt{v, err}
	}()
	return out
}

// newView is the view built ahead the first time, a new one after (one
// that met an error is built again).
func (f *follower) newView() (*scheduling.View, error) {
	if f.ahead != nil {
		b := <-f.ahead
		f.ahead = nil
		return b.v, b.err
	}
	return scheduling.NewView(f.s.schedNodes(), f.s.in.Pods, f.s.in.Namespaces, f.s.in.Scheduler)
}

// contested: the FitError names a reason other pods' placement changes
// (room, ports, spread, inter-pod affinity), not only the nodes' own
// labels and taints.
func contested(fitError string) bool {
	for _, r := range []string{"Insufficient", "Too many pods", "free ports", "pod affinity", "anti-affinity", "topology spread"} {
		if strings.Contains(fitError, r) {
			return true
		}
	}
	return false
}

// unplaced: a replacement that fits nowhere is uncertain when an earlier
// one had a choice of nodes and the reason is one that choice changes.
func (f *follower) unplaced(r *Replacement, pl scheduling.Placement) {
	if f.choice && contested(pl.FitError) {
		r.Certain = false
		f.s.doubt(fmt.Sprintf("replacements of %s that fit nowhere might fit had an earlier replacement gone to another of its feasible nodes", r.Owner))
	}
}

// monotone: adding pods to nodes can only make the pod's filters fail
// more (no required pod affinity, no topology spread: those can turn a
// node feasible as pods arrive).
func monotone(pod *corev1.Pod) bool {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return false
	}
	a := pod.Spec.Affinity
	return a == nil || a.PodAffinity == nil || len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0
}

// schedNodes are the nodes as the scheduler sees them: the failed ones
// carry the controller's NoSchedule and NoExecute taints (the NoSchedule
// one from the moment the node is marked, before any deletion).
func (s *sim) schedNodes() []*corev1.Node {
	key := TaintKey(s.in.Settings.Condition)
	out := make([]*corev1.Node, 0, len(s.in.Nodes))
	for _, n := range s.in.Nodes {
		if s.failed[n.Name] {
			n = n.DeepCopy()
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule},
				corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute})
		}
		out = append(out, n)
	}
	return out
}
