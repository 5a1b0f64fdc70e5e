// Package source reads the objects a prediction needs, from a live cluster
// (read-only: get and list only) or from a file, into a snapshot.
package source

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	return ReadFiles([]string{name}, stdin, defaultNamespace)
}

// ReadFiles loads one snapshot from several files, as repeated -f flags or
// a directory give them. Each file must be readable and well formed; the
// set as a whole must hold at least one workload or pod, and each object
// may appear once.
func ReadFiles(names []string, stdin io.Reader, defaultNamespace string) (*snapshot.Snapshot, error) {
	return readFiles(names, stdin, defaultNamespace, false)
}

// ReadNodeFiles is ReadFiles for a node preview: pods are kept whole and
// kubelet documents (stats summary, configz) are recognised by shape.
func ReadNodeFiles(names []string, stdin io.Reader) (*snapshot.Snapshot, error) {
	return readFiles(names, stdin, "", true)
}

func readFiles(names []string, stdin io.Reader, defaultNamespace string, whole bool) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{ClaimsKnown: true}
	seen := map[string]string{} // kind namespace/name -> the file it came from
	for _, name := range names {
		one, err := readOne(name, stdin, defaultNamespace, whole)
		if err != nil {
			return nil, err
		}
		if err := merge(s, one, seen, displayName(name)); err != nil {
			return nil, err
		}
	}
	if whole && len(s.Nodes)+len(s.Kubelet.Summaries)+len(s.Kubelet.Configs) > 0 {
		return s, nil // a node with no pods is a node preview's honest input
	}
	if !usable(s) {
		return nil, &FileError{Name: displayName(strings.Join(names, ", ")), Err: fmt.Errorf("it holds no Deployment, ReplicaSet, ReplicationController, StatefulSet or Pod")}
	}
	return s, nil
}

func displayName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

// readOne reads one file. The streaming reader handles files as kubectl
// prints them in one pass and little memory; anything else (and every
// error) is left to the general reader, so results and messages are the
// same either way.
func readOne(name string, stdin io.Reader, defaultNamespace string, whole bool) (*snapshot.Snapshot, error) {
	var data []byte // standard input, kept for the general reader
	var r io.Reader
	if name == "-" {
		var err error
		if data, err = io.ReadAll(stdin); err != nil {
			return nil, &FileError{Name: "standard input", Err: err}
		}
		r = bytes.NewReader(data)
	} else if f, err := os.Open(name); err == nil {
		defer f.Close()
		r = f
	}
	if whole {
		if s, ok, err := readIfKubeletDoc(name, data, r); ok {
			return s, err
		}
	}
	if r != nil {
		if s, err := streamReadPods(r, defaultNamespace, whole); err == nil && usable(s) {
			return s, nil
		}
	}
	if whole {
		return readGeneral(name, data, defaultNamespace, func(*corev1.Pod) {})
	}
	return readWhole(name, data, defaultNamespace)
}

// readWhole is the general reader: the whole input through kubectl's
// resource builder into unstructured objects, then typed ones.
func readWhole(name string, data []byte, defaultNamespace string) (*snapshot.Snapshot, error) {
	return readGeneral(name, data, defaultNamespace, trimPod)
}

// readGeneral is readWhole with each pod handed to keep as it is added
// (trimPod; tests compare with whole pods).
func readGeneral(name string, data []byte, defaultNamespace string, keep func(*corev1.Pod)) (*snapshot.Snapshot, error) {
	var err error
	display := displayName(name)
	if name != "-" {
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
		if u.GroupVersionKind().GroupKind().String() == "Pod" {
			keep(s.Pods[len(s.Pods)-1])
		}
	}
	return s, nil
}

// merge adds one file's objects to s. The same object twice (a file given
// twice, two snapshots in one directory) would count its pods twice.
func merge(s, one *snapshot.Snapshot, seen map[string]string, display string) error {
	var err error
	note := func(kind string, m metav1.Object) {
		key := kind + " " + m.GetNamespace() + "/" + m.GetName()
		if first, dup := seen[key]; dup && err == nil {
			err = &FileError{Name: display, Err: fmt.Errorf("%s is also in %s: give each object once", key, first)}
		}
		seen[key] = display
	}
	s.Deployments = appendAll(s.Deployments, one.Deployments, "Deployment.apps", note)
	s.ReplicaSets = appendAll(s.ReplicaSets, one.ReplicaSets, "ReplicaSet.apps", note)
	s.StatefulSets = appendAll(s.StatefulSets, one.StatefulSets, "StatefulSet.apps", note)
	s.Jobs = appendAll(s.Jobs, one.Jobs, "Job.batch", note)
	s.ReplicationControllers = appendAll(s.ReplicationControllers, one.ReplicationControllers, "ReplicationController", note)
	s.Pods = appendAll(s.Pods, one.Pods, "Pod", note)
	s.Claims = appendAll(s.Claims, one.Claims, "PersistentVolumeClaim", note)
	s.Nodes = appendAll(s.Nodes, one.Nodes, "Node", note)
	s.HPAs = appendAll(s.HPAs, one.HPAs, "HorizontalPodAutoscaler.autoscaling", note)
	s.PDBs = appendAll(s.PDBs, one.PDBs, "PodDisruptionBudget.policy", note)
	s.Notes = append(s.Notes, one.Notes...)
	mergeKubelet(s, one)
	return err
}

func appendAll[T any, PT interface {
	*T
	metav1.Object
}](dst, src []PT, kind string, note func(string, metav1.Object)) []PT {
	for _, o := range src {
		note(kind, o)
	}
	return append(dst, src...)
}

func usable(s *snapshot.Snapshot) bool {
	return len(s.Pods)+len(s.ReplicaSets)+len(s.Deployments)+len(s.StatefulSets)+len(s.ReplicationControllers)+len(s.Jobs) > 0
}

func add(s *snapshot.Snapshot, u *unstructured.Unstructured) error {
	switch u.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps":
		return into(u, &s.Deployments)
	case "ReplicaSet.apps":
		return into(u, &s.ReplicaSets)
	case "StatefulSet.apps":
		return into(u, &s.StatefulSets)
	case "Job.batch":
		return into(u, &s.Jobs)
	case "ReplicationController":
		return into(u, &s.ReplicationControllers)
	case "Pod":
		return into(u, &s.Pods)
	case "PersistentVolumeClaim":
		return into(u, &s.Claims)
	case "Node":
		return into(u, &s.Nodes)
	case "HorizontalPodAutoscaler.autoscaling":
		if u.GroupVersionKind().Version != "v2" {
			return nil // only autoscaling/v2 carries what the conflicts need
		}
		return into(u, &s.HPAs)
	case "PodDisruptionBudget.policy":
		return into(u, &s.PDBs)
	}
	return nil
}

// into converts u to the typed object list's element type and appends it.
func into[T any](u *unstructured.Unstructured, list *[]*T) error {
	o := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o); err != nil {
		return err
	}
	*list = append(*list, o)
	return nil
}
