package rollout

import (
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
	"github.com/scale-preview/scale-preview/pkg/statefulset"
)

// slot is one ordinal of the StatefulSet during the simulation.
type slot struct {
	ord   int
	name  string
	pod   *corev1.Pod // nil once deleted and gone
	isNew bool        // at the update revision
	fresh bool        // created during the rollout
	// available: Running, Ready for minReadySeconds, not terminating.
	available  bool
	candidates []string
	fitError   string
}

// ssSim is one run of a StatefulSet's rolling update
// (stateful_set_control.go's updateStatefulSet, one sync at a time).
type ssSim struct {
	in       Input
	set      *appsv1.StatefulSet
	template *corev1.PodTemplateSpec
	slots    []*slot
	// condemned: the pods at ordinals past spec.replicas (a scale-in with
	// the change), highest ordinal first; deleted before any update.
	condemned  []*slot
	partition  int // index into slots
	maxUnavail int
	monotonic  bool // OrderedReady
	view       *scheduling.View
	budgets    []*budget
	neverReady bool
	certain    bool
	warnings   []string
	blockedBy  *slot // the pod OrderedReady waits on
}

// newSSSim reads the StatefulSet's pods by ordinal.
func newSSSim(in Input, tmpl *corev1.PodTemplateSpec, neverReady bool) (*ssSim, error) {
	set := in.StatefulSet
	s := &ssSim{in: in, set: set, template: tmpl, neverReady: neverReady, certain: true,
		monotonic: set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement, maxUnavail: 1}
	start := 0
	if set.Spec.Ordinals != nil && in.Rules.StatefulSet.StartOrdinal {
		start = int(set.Spec.Ordinals.Start)
	}
	n := int(replicasOf(set.Spec.Replicas))
	for i := range n {
		ord := start + i
		s.slots = append(s.slots, &slot{ord: ord, name: fmt.Sprintf("%s-%d", set.Name, ord)})
	}
	if err := s.readStrategy(n); err != nil {
		return nil, err
	}
	if w := quotasUnmodelled(in, set.Namespace, "StatefulSet", false); len(w) > 0 {
		s.warnings, s.certain = append(s.warnings, w...), false
	}
	gone := s.readPods(start)
	view, err := scheduling.NewView(in.Nodes, in.Pods, in.Namespaces, in.Scheduler)
	if err != nil {
		return nil, err
	}
	for _, p := range gone {
		view.Remove(p)
	}
	s.view = view
	var pods []*corev1.Pod
	for _, sl := range s.alive() {
		pods = append(pods, sl.pod)
	}
	probe := &slot{ord: start, name: fmt.Sprintf("%s-%d", set.Name, start)} // spec.replicas may be 0
	s.budgets = readBudgetsFor(in, s.newPod(probe), pods, s.healthy)
	return s, nil
}

// readStrategy: partition and maxUnavailable as the controller reads
// them (maxUnavailable only behind MaxUnavailableStatefulSet; a percentage
// rounds down, and never below 1: getStatefulSetMaxUnavailable).
func (s *ssSim) readStrategy(replicas int) error {
	ru := s.set.Spec.UpdateStrategy.RollingUpdate
	if ru == nil {
		return nil
	}
	if ru.Partition != nil {
		if *ru.Partition < 0 {
			return inputErr("statefulset %s: spec.updateStrategy.rollingUpdate.partition %d is negative (fix the file: the API server rejects it)", s.set.Name, *ru.Partition)
		}
		s.partition = min(int(*ru.Partition), replicas)
	}
	if ru.MaxUnavailable == nil {
		return nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, replicas, false)
	if err != nil || v < 0 || (ru.MaxUnavailable.Type == intstr.Int && v == 0) {
		return inputErr("statefulset %s: spec.updateStrategy.rollingUpdate.maxUnavailable %q is not a positive integer or percentage (fix the file: the API server rejects it)", s.set.Name, ru.MaxUnavailable.String())
	}
	if s.in.Rules.StatefulSet.MaxUnavailable {
		s.maxUnavail = max(v, 1)
	} else if v > 1 {
		s.warnings = append(s.warnings, fmt.Sprintf("maxUnavailable %s is ignored: the MaxUnavailableStatefulSet gate is off in %s (pods go one at a time)", ru.MaxUnavailable.String(), s.in.Rules.Version()))
	}
	return nil
}

// readPods places each owned pod at its ordinal. Every existing pod is at
// the old revision (the change makes a new one); a terminating or finished
// pod is gone by the time the controller acts (it recreates it).
func (s *ssSim) readPods(start int) (gone []*corev1.Pod) {
	for _, p := range s.in.Pods {
		c := metav1.GetControllerOf(p)
		if p.Namespace != s.set.Namespace || c == nil || c.UID != s.set.UID {
			continue
		}
		parent, ord := statefulset.ParentAndOrdinal(p.Name)
		i := ord - start
		if parent != s.set.Name || i < 0 {
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			gone = append(gone, p)
			continue
		}
		sl := &slot{ord: ord, name: p.Name}
		if i < len(s.slots) {
			sl = s.slots[i]
		} else {
			s.condemned = append(s.condemned, sl)
		}
		sl.pod = p
		sl.available = podutils.IsPodAvailable(p, s.set.Spec.MinReadySeconds, metav1.NewTime(s.in.Now))
	}
	slices.SortFunc(s.condemned, func(a, b *slot) int { return b.ord - a.ord })
	return gone
}

// alive are the pods of the slots and the condemned ordinals still there.
func (s *ssSim) alive() []*slot {
	var out []*slot
	for _, sl := range append(slices.Clone(s.slots), s.condemned...) {
		if sl.pod != nil {
			out = append(out, sl)
		}
	}
	return out
}

// newPod is the controller's pod for an ordinal from the new template
// (newVersionedStatefulSetPod): same name, hostname and claims.
func (s *ssSim) newPod(sl *slot) *corev1.Pod {
	t := s.template
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sl.name, Namespace: s.set.Namespace, UID: types.UID(sl.name + "-new"),
		Labels: maps.Clone(t.Labels), Annotations: maps.Clone(t.Annotations), CreationTimestamp: metav1.NewTime(s.in.Now.Truncate(time.Second)),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: s.set.Name, UID: s.set.UID, Controller: ptrTrue()}}},
		Spec: *t.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["statefulset.kubernetes.io/pod-name"] = sl.name
	p.Spec.Hostname, p.Spec.Subdomain = sl.name, s.set.Spec.ServiceName
	for _, ct := range s.set.Spec.VolumeClaimTemplates {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: ct.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: statefulset.ClaimName(ct.Name, s.set.Name, sl.ord)}}})
	}
	return p
}

// healthy counts the pods b selects that are healthy (old: Ready; new:
// available).
func (s *ssSim) healthy(b *disruption.Budget) int32 {
	var n int32
	for _, sl := range s.alive() {
		ready := sl.available || (!sl.fresh && disruption.IsReady(sl.pod))
		if ready && b.EvictionSelects(sl.pod) {
			n++
		}
	}
	return n
}

// availableNow: the StatefulSet's pods available now.
func (s *ssSim) availableNow() int32 {
	var n int32
	for _, sl := range s.alive() {
		if sl.available {
			n++
		}
	}
	return n
}

var _ = prediction.RolloutCompletes
