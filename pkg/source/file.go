// Package source reads the objects a prediction needs, from a live cluster
// (read-only: get and list only) or from a file, into a snapshot.
package source

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

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
// set as a whole must hold at least one workload or pod.
func ReadFiles(names []string, stdin io.Reader, defaultNamespace string) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{ClaimsKnown: true}
	seen := map[string]string{} // kind/namespace/name -> the file it came from
	for _, name := range names {
		if err := readInto(s, seen, name, stdin, defaultNamespace); err != nil {
			return nil, err
		}
	}
	if len(s.Pods)+len(s.ReplicaSets)+len(s.Deployments)+len(s.StatefulSets)+len(s.ReplicationControllers) == 0 {
		display := strings.Join(names, ", ")
		if display == "-" {
			display = "standard input"
		}
		return nil, &FileError{Name: display, Err: fmt.Errorf("it holds no Deployment, ReplicaSet, ReplicationController, StatefulSet or Pod")}
	}
	return s, nil
}

func readInto(s *snapshot.Snapshot, seen map[string]string, name string, stdin io.Reader, defaultNamespace string) error {
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
		return &FileError{Name: display, Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return &FileError{Name: display, Err: fmt.Errorf("it is empty")}
	}
	infos, err := resource.NewLocalBuilder().
		Unstructured().
		Stream(bytes.NewReader(data), display).
		Flatten().
		Do().Infos()
	if err != nil {
		return &FileError{Name: display, Err: err}
	}
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(defaultNamespace)
		}
		// The same object twice (a file given twice, two snapshots in one
		// directory) would count its pods twice.
		key := u.GroupVersionKind().GroupKind().String() + " " + u.GetNamespace() + "/" + u.GetName()
		if first, dup := seen[key]; dup {
			return &FileError{Name: display, Err: fmt.Errorf("%s is also in %s: give each object once", key, first)}
		}
		seen[key] = display
		if err := add(s, u); err != nil {
			return &FileError{Name: display, Err: fmt.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)}
		}
	}
	return nil
}

func add(s *snapshot.Snapshot, u *unstructured.Unstructured) error {
	switch u.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps":
		return into(u, &s.Deployments)
	case "ReplicaSet.apps":
		return into(u, &s.ReplicaSets)
	case "StatefulSet.apps":
		return into(u, &s.StatefulSets)
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
