// Package perf measures the plugin on issue 34's large cluster beside
// `kubectl get pods -A -o json` of the same pods and a plain JSON parse
// (sidebyside_test.go), and writes the cluster (bigcluster/).
package perf

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// listServer serves the cluster's objects read-only, as kube-apiserver
// serves lists from its watch cache: paginated (limit and continue), in
// protobuf or JSON as the client's Accept header asks, with the discovery
// documents kubectl needs. Each page is encoded once, before any client
// runs, so that the clients' figures hold no server work but the copy.
type listServer struct {
	srv   *httptest.Server
	lists map[string]*resourceList // by URL path, e.g. /api/v1/pods
	items map[string]runtime.Object
}

type resourceList struct {
	gv      schema.GroupVersion
	kind    string // of the list, e.g. PodList
	objects []runtime.Object
	mu      sync.Mutex
	pages   map[string][]byte // "format limit offset" -> body
}

// resources the server lists: path, group version, list kind, and the
// object kinds that go into it.
var resources = []struct {
	path, group, version, resource, kind string
	namespaced                           bool
}{
	{"/api/v1/nodes", "", "v1", "nodes", "Node", false},
	{"/api/v1/pods", "", "v1", "pods", "Pod", true},
	{"/api/v1/namespaces", "", "v1", "namespaces", "Namespace", false},
	{"/api/v1/replicationcontrollers", "", "v1", "replicationcontrollers", "ReplicationController", true},
	{"/api/v1/persistentvolumeclaims", "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
	{"/apis/policy/v1/poddisruptionbudgets", "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true},
	{"/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false},
	{"/apis/apps/v1/deployments", "apps", "v1", "deployments", "Deployment", true},
	{"/apis/apps/v1/replicasets", "apps", "v1", "replicasets", "ReplicaSet", true},
	{"/apis/apps/v1/statefulsets", "apps", "v1", "statefulsets", "StatefulSet", true},
	{"/apis/apps/v1/daemonsets", "apps", "v1", "daemonsets", "DaemonSet", true},
	{"/apis/batch/v1/jobs", "batch", "v1", "jobs", "Job", true},
	{"/api/v1/resourcequotas", "", "v1", "resourcequotas", "ResourceQuota", true}, // none; a rollout lists them
}

func newListServer(spec sourcetest.ClusterSpec) (*listServer, error) {
	s := &listServer{lists: map[string]*resourceList{}, items: map[string]runtime.Object{}}
	byKind := map[string]*resourceList{}
	for _, r := range resources {
		l := &resourceList{gv: schema.GroupVersion{Group: r.group, Version: r.version}, kind: r.kind + "List", pages: map[string][]byte{}}
		s.lists[r.path] = l
		byKind[r.kind] = l
	}
	err := sourcetest.EachClusterObject(spec, func(o runtime.Object) error {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		l := byKind[kind]
		if l == nil {
			return fmt.Errorf("no list for %s", kind)
		}
		l.objects = append(l.objects, o)
		switch o := o.(type) {
		case *corev1.Pod:
			s.items["/api/v1/namespaces/"+o.Namespace+"/pods/"+o.Name] = o
		case *corev1.Node:
			s.items["/api/v1/nodes/"+o.Name] = o
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, l := range s.lists {
		for _, format := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
			for off := 0; off == 0 || off < len(l.objects); off += 500 {
				if _, err := l.page(format, 500, off); err != nil {
					return nil, err
				}
			}
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s, nil
}

func (s *listServer) Close() { s.srv.Close() }

// page encodes objects[off:off+limit] as one list (limit 0: all).
func (l *resourceList) page(format string, limit, off int) ([]byte, error) {
	key := fmt.Sprint(format, " ", limit, " ", off)
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.pages[key]; ok {
		return b, nil
	}
	end := len(l.objects)
	if limit > 0 && off+limit < end {
		end = off + limit
	}
	list, err := scheme.Scheme.New(l.gv.WithKind(l.kind))
	if err != nil {
		return nil, err
	}
	if err := meta.SetList(list, l.objects[off:end]); err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	lm.SetResourceVersion("123456")
	if end < len(l.objects) {
		lm.SetContinue(strconv.Itoa(end))
		lm.SetRemainingItemCount(ptr(int64(len(l.objects) - end)))
	}
	b, err := encode(format, l.gv, list)
	if err != nil {
		return nil, err
	}
	l.pages[key] = b
	return b, nil
}

func encode(format string, gv schema.GroupVersion, obj runtime.Object) ([]byte, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), format)
	if !ok {
		return nil, fmt.Errorf("no serializer for %s", format)
	}
	return runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, gv), obj)
}

func (s *listServer) serve(w http.ResponseWriter, r *http.Request) {
	format := runtime.ContentTypeJSON
	if strings.Contains(r.Header.Get("Accept"), runtime.ContentTypeProtobuf) {
		format = runtime.ContentTypeProtobuf
	}
	path := r.URL.Path
	if body, ok := discovery(path); ok {
		w.Header().Set("Content-Type", runtime.ContentTypeJSON)
		_, _ = w.Write(body)
		return
	}
	if o, ok := s.items[path]; ok {
		b, err := encode(format, corev1.SchemeGroupVersion, o)
		s.reply(w, format, b, err)
		return
	}
	l, ok := s.lists[path]
	if !ok {
		l, ok = s.lists[namespacedToAll(path)]
		if ok && !strings.HasPrefix(path, "/api/v1/namespaces/kube-system/") && !strings.HasSuffix(path, "/resourcequotas") {
			ok = false
		}
		// The version probe lists kube-system's controller-manager, a
		// rollout its namespace's quotas: none.
		if ok {
			b, err := (&resourceList{gv: l.gv, kind: l.kind, pages: map[string][]byte{}}).page(format, 0, 0)
			s.reply(w, format, b, err)
			return
		}
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
		return
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	off, _ := strconv.Atoi(r.URL.Query().Get("continue"))
	b, err := l.page(format, limit, off)
	s.reply(w, format, b, err)
}

func (s *listServer) reply(w http.ResponseWriter, format string, b []byte, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", format)
	_, _ = w.Write(b)
}

// namespacedToAll maps /api/v1/namespaces/NS/pods to /api/v1/pods.
func namespacedToAll(path string) string {
	parts := strings.Split(path, "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "namespaces" && i+3 == len(parts) {
			return strings.Join(append(parts[:i:i], parts[i+2]), "/")
		}
	}
	return path
}

// discovery answers the legacy discovery documents for the resources.
func discovery(path string) ([]byte, bool) {
	switch path {
	case "/version":
		return mustJSON(map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.1", "platform": "linux/amd64"}), true
	case "/api":
		return mustJSON(metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}}), true
	case "/apis":
		gl := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		seen := map[string]bool{}
		for _, r := range resources {
			if r.group != "" && !seen[r.group] {
				seen[r.group] = true
				v := metav1.GroupVersionForDiscovery{GroupVersion: r.group + "/" + r.version, Version: r.version}
				gl.Groups = append(gl.Groups, metav1.APIGroup{Name: r.group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
			}
		}
		return mustJSON(gl), true
	}
	gv := strings.TrimPrefix(strings.TrimPrefix(path, "/apis/"), "/api/")
	rl := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	for _, r := range resources {
		if (schema.GroupVersion{Group: r.group, Version: r.version}).String() == gv {
			rl.APIResources = append(rl.APIResources, metav1.APIResource{Name: r.resource, Kind: r.kind, Namespaced: r.namespaced,
				Verbs: metav1.Verbs{"get", "list"}})
		}
	}
	if len(rl.APIResources) == 0 {
		return nil, false
	}
	return mustJSON(rl), true
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }
