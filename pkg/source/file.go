// Package source reads the objects a prediction needs, from a live cluster
// (read-only: get and list only) or from a file, into a snapshot.
package source

import (
	"bytes"
	"fmt"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// FileError marks a file that cannot be used: unreadable, malformed, empty.
type FileError struct {
	Name string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("cannot use %s: %v", e.Name, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// ReadFile loads a snapshot from a YAML or JSON file ("-" for stdin): a v1
// List as `kubectl get deploy,rs,rc,sts,pods -o yaml` prints, multi-document
// YAML, or single objects. Objects of other kinds are skipped.
// defaultNamespace fills in objects that carry no namespace.
func ReadFile(name string, stdin io.Reader, defaultNamespace string) (*snapshot.Snapshot, error) {
	var data []byte
	var err error
	display := name
	if name == "-" {
		display = "standard input"
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, &FileError{Name: display, Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{Name: display, Err: fmt.Errorf("it is empty")}
	}
	infos, err := resource.NewLocalBuilder().
		Unstructured().
		Stream(bytes.NewReader(data), display).
		Flatten().
		Do().Infos()
	if err != nil {
		return nil, &FileError{Name: display, Err: err}
	}
	s := &snapshot.Snapshot{ClaimsKnown: true}
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(defaultNamespace)
		}
		if err := add(s, u); err != nil {
			return nil, &FileError{Name: display, Err: fmt.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)}
		}
	}
	if len(s.Pods)+len(s.ReplicaSets)+len(s.Deployments)+len(s.StatefulSets)+len(s.ReplicationControllers) == 0 {
		return nil, &FileError{Name: display, Err: fmt.Errorf("it holds no Deployment, ReplicaSet, ReplicationController, StatefulSet or Pod")}
	}
	return s, nil
}

func add(s *snapshot.Snapshot, u *unstructured.Unstructured) error {
	conv := runtime.DefaultUnstructuredConverter
	switch u.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps":
		o := &appsv1.Deployment{}
		s.Deployments = append(s.Deployments, o)
		return conv.FromUnstructured(u.Object, o)
	case "ReplicaSet.apps":
		o := &appsv1.ReplicaSet{}
		s.ReplicaSets = append(s.ReplicaSets, o)
		return conv.FromUnstructured(u.Object, o)
	case "StatefulSet.apps":
		o := &appsv1.StatefulSet{}
		s.StatefulSets = append(s.StatefulSets, o)
		return conv.FromUnstructured(u.Object, o)
	case "ReplicationController":
		o := &corev1.ReplicationController{}
		s.ReplicationControllers = append(s.ReplicationControllers, o)
		return conv.FromUnstructured(u.Object, o)
	case "Pod":
		o := &corev1.Pod{}
		s.Pods = append(s.Pods, o)
		return conv.FromUnstructured(u.Object, o)
	case "PersistentVolumeClaim":
		o := &corev1.PersistentVolumeClaim{}
		s.Claims = append(s.Claims, o)
		return conv.FromUnstructured(u.Object, o)
	case "Node":
		o := &corev1.Node{}
		s.Nodes = append(s.Nodes, o)
		return conv.FromUnstructured(u.Object, o)
	case "HorizontalPodAutoscaler.autoscaling":
		if u.GroupVersionKind().Version != "v2" {
			return nil
		}
		o := &autoscalingv2.HorizontalPodAutoscaler{}
		s.HPAs = append(s.HPAs, o)
		return conv.FromUnstructured(u.Object, o)
	case "PodDisruptionBudget.policy":
		o := &policyv1.PodDisruptionBudget{}
		s.PDBs = append(s.PDBs, o)
		return conv.FromUnstructured(u.Object, o)
	}
	return nil
}
