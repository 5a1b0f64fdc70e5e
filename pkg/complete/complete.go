// Package complete cross-checks a snapshot against the objects' own status
// before anything is predicted from it. A controller's status says how many
// pods it counted at its last sync; a snapshot that holds fewer of them was
// cut short (an export without pods, a truncated file), and one that
// disagrees in a less clear-cut way (pods created or deleted since the
// status was written, a spec change not yet observed) still gives an
// answer, but not a certain one.
package complete

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// IncompleteError: the snapshot lacks objects the prediction needs.
type IncompleteError struct {
	What    string // what is missing, one clause
	Command string // the export that would include it
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("the snapshot is incomplete: %s; export them too: %s", e.What, e.Command)
}

// DuplicateError: the same object appears twice in the snapshot.
type DuplicateError struct{ Kind, Namespace, Name string }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s %s/%s appears more than once in the snapshot: remove the repeated copy", e.Kind, e.Namespace, e.Name)
}

// NamelessError: an object without a name or namespace, which no API
// server returns; the file is damaged or hand-edited.
type NamelessError struct{ Kind, Name string }

func (e *NamelessError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("a %s in the snapshot has no metadata.name: the file is damaged; export it again with kubectl get -o yaml", e.Kind)
	}
	return fmt.Sprintf("%s %s in the snapshot has no namespace: the file is damaged; export it again with kubectl get -o yaml", e.Kind, e.Name)
}

// Report lists why a prediction from this snapshot cannot be certain.
type Report struct {
	Uncertain []string
}

// Check cross-checks s for a scale of ref. live says the snapshot was read
// from the API server just now: a mismatch there is a moving cluster, not
// a cut-short export, so it makes the answer uncertain instead of failing.
// A target missing from the snapshot is left to the workload model.
func Check(s *snapshot.Snapshot, ref snapshot.Ref, live bool) (Report, error) {
	var r Report
	if err := duplicates(s); err != nil {
		return r, err
	}
	r.Uncertain = append(r.Uncertain, s.Unsettled...)
	c := checker{s: s, ref: ref, live: live, rep: &r}
	var err error
	switch ref.Kind {
	case snapshot.Deployment:
		err = c.deployment()
	case snapshot.ReplicaSet:
		err = c.replicaSet()
	case snapshot.ReplicationController:
		err = c.replicationController()
	case snapshot.StatefulSet:
		err = c.statefulSet()
	case snapshot.Job:
		err = c.job()
	}
	return r, err
}

type checker struct {
	s    *snapshot.Snapshot
	ref  snapshot.Ref
	live bool
	rep  *Report
}

func (c *checker) uncertain(format string, a ...any) {
	c.rep.Uncertain = append(c.rep.Uncertain, fmt.Sprintf(format, a...))
}

// export is the kubectl command that would put the missing objects into a file.
func (c *checker) export(kinds string) string {
	return fmt.Sprintf("kubectl get %s -n %s -o yaml > snapshot.yaml", kinds, c.ref.Namespace)
}

// missing fails offline and marks the answer uncertain live.
func (c *checker) missing(kinds, what string) error {
	if c.live {
		c.uncertain("%s (read live: the cluster changed between the reads, or the status is stale)", what)
		return nil
	}
	return &IncompleteError{What: what, Command: c.export(kinds)}
}

// generation marks a spec change the controller has not acted on yet.
func (c *checker) generation(kind string, m metav1.ObjectMeta, observed int64) {
	if observed > 0 && m.Generation > observed {
		c.uncertain("%s %s: generation %d is not yet observed by its controller (observedGeneration %d): a change is still being applied", kind, m.Name, m.Generation, observed)
	}
}

// statusWritten: a controller has written this object's status at least
// once. Hand-written objects carry none, and then there is nothing to check.
func statusWritten(observed int64, replicas int32) bool { return observed > 0 || replicas > 0 }

func (c *checker) deployment() error {
	d := find(c.s.Deployments, c.ref)
	if d == nil {
		return nil
	}
	c.generation("Deployment", d.ObjectMeta, d.Status.ObservedGeneration)
	owned := c.ownedReplicaSets(d.UID, "Deployment", d.Name)
	if len(owned) == 0 {
		if statusWritten(d.Status.ObservedGeneration, d.Status.Replicas) && d.Status.Replicas > 0 {
			return c.missing("deploy,rs,pods", fmt.Sprintf("Deployment %s counts %d pods in its status but none of its ReplicaSets is in the snapshot", d.Name, d.Status.Replicas))
		}
		return nil
	}
	var sum int32
	for _, rs := range owned {
		sum += rs.Status.Replicas
	}
	if d.Status.ObservedGeneration > 0 && d.Status.Replicas != sum {
		c.uncertain("Deployment %s counts %d pods in its status, its ReplicaSets %d: the status is being updated", d.Name, d.Status.Replicas, sum)
	}
	for _, rs := range owned {
		if err := c.replicaSetPods(rs, "deploy,rs,pods"); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) replicaSet() error {
	if rs := find(c.s.ReplicaSets, c.ref); rs != nil {
		group := []*appsv1.ReplicaSet{rs}
		if o := metav1.GetControllerOf(rs); o != nil {
			// Siblings' pods decide ranks: they must be complete too.
			group = c.ownedReplicaSets(o.UID, o.Kind, o.Name)
		}
		for _, x := range group {
			if err := c.replicaSetPods(x, "rs,pods"); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *checker) replicaSetPods(rs *appsv1.ReplicaSet, kinds string) error {
	c.generation("ReplicaSet", rs.ObjectMeta, rs.Status.ObservedGeneration)
	if !statusWritten(rs.Status.ObservedGeneration, rs.Status.Replicas) {
		return nil
	}
	active, terminating := c.ownedPods(rs.UID, "ReplicaSet", rs.Name)
	return c.compare("ReplicaSet", rs.Name, rs.Status.Replicas, active, terminating, kinds)
}

func (c *checker) replicationController() error {
	if rc := find(c.s.ReplicationControllers, c.ref); rc != nil {
		c.generation("ReplicationController", rc.ObjectMeta, rc.Status.ObservedGeneration)
		if !statusWritten(rc.Status.ObservedGeneration, rc.Status.Replicas) {
			return nil
		}
		active, terminating := c.ownedPods(rc.UID, "ReplicationController", rc.Name)
		return c.compare("ReplicationController", rc.Name, rc.Status.Replicas, active, terminating, "rc,pods")
	}
	return nil
}

// compare checks a ReplicaSet's or RC's status.replicas, which counts the
// active pods it owned at its last sync (calculateStatus: not terminating,
// not finished), against the pods found.
func (c *checker) compare(kind, name string, status int32, active, terminating int, kinds string) error {
	switch {
	case int(status) == active:
		return nil
	case active == 0 && terminating == 0:
		return c.missing(kinds, fmt.Sprintf("%s %s counts %d pods in its status but none of its pods is in the snapshot", kind, name, status))
	case int(status) > active && int(status) <= active+terminating:
		c.uncertain("%s %s: its status still counts %d pod(s) now terminating: the controller has not synced since they began to terminate", kind, name, int(status)-active)
	case int(status) > active:
		c.uncertain("%s %s counts %d pods in its status, the snapshot has %d: pods were deleted since the status was written, or are missing from the snapshot", kind, name, status, active)
	default:
		c.uncertain("%s %s counts %d pods in its status, the snapshot has %d: pods were created since the status was written", kind, name, status, active)
	}
	return nil
}

func (c *checker) statefulSet() error {
	if set := find(c.s.StatefulSets, c.ref); set != nil {
		c.generation("StatefulSet", set.ObjectMeta, set.Status.ObservedGeneration)
		if !statusWritten(set.Status.ObservedGeneration, set.Status.Replicas) {
			return nil
		}
		// The StatefulSet's status.replicas counts every owned pod that has
		// a phase (isCreated), terminating and finished ones included.
		created := 0
		for _, p := range c.s.Pods {
			if p.Namespace == set.Namespace && ownedBy(p.OwnerReferences, set.UID, "StatefulSet", set.Name) && p.Status.Phase != "" {
				created++
			}
		}
		switch {
		case int(set.Status.Replicas) == created:
		case created == 0:
			return c.missing("sts,pods,pvc", fmt.Sprintf("StatefulSet %s counts %d pods in its status but none of its pods is in the snapshot", set.Name, set.Status.Replicas))
		default:
			c.uncertain("StatefulSet %s counts %d pods in its status, the snapshot has %d: pods were created or deleted since the status was written, or are missing from the snapshot", set.Name, set.Status.Replicas, created)
		}
		return nil
	}
	return nil
}

// find is the object named by ref, or nil.
func find[T metav1.Object](list []T, ref snapshot.Ref) T {
	var zero T
	for _, x := range list {
		if x.GetName() == ref.Name && x.GetNamespace() == ref.Namespace {
			return x
		}
	}
	return zero
}

func (c *checker) ownedReplicaSets(uid types.UID, kind, name string) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range c.s.ReplicaSets {
		if rs.Namespace == c.ref.Namespace && ownedBy(rs.OwnerReferences, uid, kind, name) {
			out = append(out, rs)
		}
	}
	return out
}

// ownedPods counts the pods controlled by the object as its status does:
// active ones, and apart from them those already terminating.
func (c *checker) ownedPods(uid types.UID, kind, name string) (active, terminating int) {
	for _, p := range c.s.Pods {
		if p.Namespace != c.ref.Namespace || !ownedBy(p.OwnerReferences, uid, kind, name) ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.DeletionTimestamp != nil {
			terminating++
		} else {
			active++
		}
	}
	return active, terminating
}

// ownedBy: the controller reference points at the object, by UID when the
// snapshot has UIDs, else by kind and name (hand-written files).
func ownedBy(refs []metav1.OwnerReference, uid types.UID, kind, name string) bool {
	for _, r := range refs {
		if r.Controller == nil || !*r.Controller {
			continue
		}
		if uid != "" && r.UID != "" {
			if r.UID == uid {
				return true
			}
			continue
		}
		if r.Kind == kind && r.Name == name {
			return true
		}
	}
	return false
}

// duplicates finds an object listed twice: its pods would count twice.
func duplicates(s *snapshot.Snapshot) error {
	seen := map[string]bool{}
	var dup []*DuplicateError
	var nameless error
	check := func(kind string, m metav1.ObjectMeta) {
		if (m.Name == "" || m.Namespace == "") && nameless == nil {
			nameless = &NamelessError{Kind: kind, Name: m.Name}
		}
		key := kind + "\x00" + m.Namespace + "\x00" + m.Name
		if seen[key] {
			dup = append(dup, &DuplicateError{Kind: kind, Namespace: m.Namespace, Name: m.Name})
		}
		seen[key] = true
	}
	for _, x := range s.Pods {
		check("Pod", x.ObjectMeta)
	}
	for _, x := range s.ReplicaSets {
		check("ReplicaSet", x.ObjectMeta)
	}
	for _, x := range s.Deployments {
		check("Deployment", x.ObjectMeta)
	}
	for _, x := range s.ReplicationControllers {
		check("ReplicationController", x.ObjectMeta)
	}
	for _, x := range s.StatefulSets {
		check("StatefulSet", x.ObjectMeta)
	}
	if nameless != nil {
		return nameless
	}
	if len(dup) == 0 {
		return nil
	}
	sort.Slice(dup, func(i, j int) bool { return dup[i].Error() < dup[j].Error() })
	return dup[0]
}

// Summary joins the reasons into one line.
func (r Report) Summary() string { return strings.Join(r.Uncertain, "; ") }
