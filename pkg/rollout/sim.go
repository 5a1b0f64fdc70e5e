package rollout

import (
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/scale-preview/scale-preview/pkg/deployment"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// maxSyncs bounds the syncs of one step; maxSteps the steps.
const (
	maxSyncs = 100
	maxSteps = 10000
)

// member is one pod of the Deployment during the simulation.
type member struct {
	pod       *corev1.Pod
	rs        string
	available bool
	isNew     bool
	// candidates: the filters pass on several nodes and the scheduler's
	// scoring (not modelled) picks one; the pod then holds no node here.
	candidates []string
	fitError   string // it fits no node (yet)
}

func (m *member) scheduled() bool { return m.pod.Spec.NodeName != "" || len(m.candidates) > 0 }

// sim is one run of the rollout.
type sim struct {
	in         Input
	d          deployment.Deployment
	template   *corev1.PodTemplateSpec
	minReady   int32
	state      []deployment.ReplicaSet
	objs       map[string]*appsv1.ReplicaSet // by name; the created one too
	pods       map[string][]*member          // active pods by ReplicaSet
	terminat   []*member                     // deleted in this step, still holding resources
	view       *scheduling.View
	created    int
	neverReady bool // the bad release: no new pod becomes available
	oneByOne   bool // several new pods became available: the controller may see them one at a time
	certain    bool
	warnings   []string
	budgets    []*budget
	quotas     []*quota
	// quotaBlocked: the last FailedCreate's message ("" when none).
	quotaBlocked string
	// unbound: the step's last placed pod when it was bound nowhere and
	// the view has not changed since (placeAlike).
	unbound *member
}

// newSim reads the Deployment's ReplicaSets and pods as the controllers
// do; view is the scheduler's, which the run changes.
func newSim(in Input, tmpl *corev1.PodTemplateSpec, neverReady bool, view *scheduling.View) (*sim, error) {
	d := in.Deployment
	s := &sim{in: in, template: tmpl, minReady: d.Spec.MinReadySeconds, objs: map[string]*appsv1.ReplicaSet{},
		pods: map[string][]*member{}, neverReady: neverReady, certain: true}
	s.d = deployment.Deployment{Replicas: replicasOf(d.Spec.Replicas), StatusReplicas: d.Status.Replicas,
		Strategy: string(d.Spec.Strategy.Type), NewReplicaSetName: d.Name + "-<new>", NewReplicaSetCreated: in.Now}
	s.d.MaxSurge, s.d.MaxUnavailable = storedFenceposts(d)
	if err := s.readReplicaSets(); err != nil {
		return nil, err
	}
	s.view = view
	s.budgets = s.readBudgets()
	s.quotas = s.readQuotas()
	return s, nil
}

// storedFenceposts are maxSurge and maxUnavailable as the API server
// stores them: a file written by hand may leave out what it defaults
// (25% each for RollingUpdate).
func storedFenceposts(d *appsv1.Deployment) (surge, unavailable *intstr.IntOrString) {
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return nil, nil
	}
	def := intstr.FromString("25%")
	surge, unavailable = &def, &def
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			surge = ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			unavailable = ru.MaxUnavailable
		}
	}
	return surge, unavailable
}

// readReplicaSets: the ReplicaSets the Deployment controls and their
// active pods; a pod whose ReplicaSet is missing is incomplete input.
func (s *sim) readReplicaSets() error {
	d := s.in.Deployment
	for _, rs := range s.in.ReplicaSets {
		if c := metav1.GetControllerOf(rs); rs.Namespace != d.Namespace || c == nil || c.UID != d.UID {
			continue
		}
		s.objs[rs.Name] = rs
		s.state = append(s.state, deployment.ReplicaSet{Name: rs.Name, UID: string(rs.UID), Created: rs.CreationTimestamp.Time,
			Replicas: replicasOf(rs.Spec.Replicas), DesiredAnnotation: rs.Annotations[deployment.DesiredReplicasAnnotation],
			MaxAnnotation: rs.Annotations[deployment.MaxReplicasAnnotation], New: workload.EqualIgnoreHash(&rs.Spec.Template, s.template)})
	}
	slices.SortFunc(s.state, func(a, b deployment.ReplicaSet) int { return cmpString(a.Name, b.Name) })
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return inputErr("deployment %s has an invalid selector: %v", d.Name, err)
	}
	for _, p := range s.in.Pods {
		if err := s.readPod(p, sel); err != nil {
			return err
		}
	}
	return nil
}

func (s *sim) readPod(p *corev1.Pod, sel labels.Selector) error {
	c := metav1.GetControllerOf(p)
	if p.Namespace != s.in.Deployment.Namespace || c == nil || c.Kind != "ReplicaSet" || !sel.Matches(labels.Set(p.Labels)) {
		return nil
	}
	rs, ok := s.objs[c.Name]
	if !ok {
		if s.ownedName(c.Name) {
			return inputErr("pod %s belongs to ReplicaSet %s, which is not in the input: a rollout needs every ReplicaSet of deployment %s (add kubectl get rs -n %s)", p.Name, c.Name, s.in.Deployment.Name, p.Namespace)
		}
		return nil
	}
	if c.UID != rs.UID || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	m := &member{pod: p, rs: rs.Name, available: podutils.IsPodAvailable(p, s.minReady, metav1.NewTime(s.in.Now))}
	if p.DeletionTimestamp != nil {
		s.terminat = append(s.terminat, m)
		return nil
	}
	s.pods[rs.Name] = append(s.pods[rs.Name], m)
	return nil
}

// ownedName: a ReplicaSet name the Deployment would give (name-hash).
func (s *sim) ownedName(rs string) bool {
	prefix := s.in.Deployment.Name + "-"
	return len(rs) > len(prefix) && rs[:len(prefix)] == prefix
}

// refresh is each ReplicaSet's status as the deployment controller reads it.
func (s *sim) refresh() {
	for i := range s.state {
		r := &s.state[i]
		var avail, term int32
		for _, m := range s.pods[r.Name] {
			if m.available {
				avail++
			}
		}
		for _, m := range s.terminat {
			if m.rs == r.Name {
				term++
			}
		}
		r.Available = avail
		r.StatusReplicas = int32(len(s.pods[r.Name]))
		r.RunningPods = r.StatusReplicas + term
	}
}

// isNew: the ReplicaSet whose template is the new one (the oldest if several).
func (s *sim) newRS() string {
	for _, r := range s.state {
		if r.New {
			return r.Name
		}
	}
	return ""
}

// createPod is the ReplicaSet controller's new pod from the template.
func (s *sim) createPod(rs string) *member {
	s.created++
	name := fmt.Sprintf("%s-new%d", s.in.Deployment.Name, s.created)
	t := s.template
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.in.Deployment.Namespace, UID: types.UID(name),
		Labels: maps.Clone(t.Labels), Annotations: maps.Clone(t.Annotations), CreationTimestamp: metav1.NewTime(s.in.Now.Truncate(time.Second)),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID(rs), Controller: ptrTrue()}}},
		Spec: *t.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = s.newHash(rs)
	return &member{pod: p, rs: rs, isNew: true}
}

// makeAvailable: a new pod runs, is Ready and has been for minReadySeconds.
func makeAvailable(m *member, now time.Time) {
	m.available = true
	m.pod.Status.Phase = corev1.PodRunning
	m.pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)}}
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func ptrTrue() *bool { b := true; return &b }

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var _ = prediction.RolloutCompletes
