package source

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kjson "sigs.k8s.io/json"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// kubeletDocKind tells a kubelet document by its first key, as
// `kubectl get --raw /api/v1/nodes/N/proxy/stats/summary` ("node") and
// `.../proxy/configz` ("kubeletconfig") print them: "" for anything else.
func kubeletDocKind(head []byte) string {
	h := bytes.TrimLeft(head, " \t\r\n")
	if len(h) == 0 || h[0] != '{' {
		return ""
	}
	h = bytes.TrimLeft(h[1:], " \t\r\n")
	switch {
	case bytes.HasPrefix(h, []byte(`"node"`)):
		return "summary"
	case bytes.HasPrefix(h, []byte(`"kubeletconfig"`)):
		return "configz"
	}
	return ""
}

// ParseSummary reads a stats summary; it must name its node.
func ParseSummary(data []byte) (*statsapi.Summary, error) {
	var s statsapi.Summary
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &s); err != nil {
		return nil, fmt.Errorf("not a kubelet stats summary: %v", oneLineErr(err))
	}
	if s.Node.NodeName == "" {
		return nil, errors.New("not a kubelet stats summary: node.nodeName is missing")
	}
	for i, p := range s.Pods {
		if p.PodRef.UID == "" || p.PodRef.Name == "" {
			return nil, fmt.Errorf("malformed stats summary: pods[%d] has no podRef name or uid", i)
		}
	}
	return &s, nil
}

// ParseConfigz reads configz's {"kubeletconfig": {...}} and returns the
// inner object.
func ParseConfigz(data []byte) (json.RawMessage, error) {
	var doc struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &doc); err != nil {
		return nil, fmt.Errorf("not a kubelet configz document: %v", oneLineErr(err))
	}
	if len(doc.KubeletConfig) == 0 || doc.KubeletConfig[0] != '{' {
		return nil, errors.New("not a kubelet configz document: \"kubeletconfig\" is not an object")
	}
	return doc.KubeletConfig, nil
}

func oneLineErr(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

// readKubeletDoc reads a whole file already known to be a kubelet document.
func readKubeletDoc(kind, display string, data []byte) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{ClaimsKnown: true}
	switch kind {
	case "summary":
		sum, err := ParseSummary(data)
		if err != nil {
			return nil, &FileError{Name: display, Err: err}
		}
		s.Kubelet.Summaries = append(s.Kubelet.Summaries, sum)
	case "configz":
		cfg, err := ParseConfigz(data)
		if err != nil {
			return nil, &FileError{Name: display, Err: err}
		}
		s.Kubelet.Configs = append(s.Kubelet.Configs, cfg)
		s.Kubelet.ConfigNames = append(s.Kubelet.ConfigNames, display)
	}
	return s, nil
}

func mergeKubelet(s, one *snapshot.Snapshot) {
	k, o := &s.Kubelet, &one.Kubelet
	k.Summaries = append(k.Summaries, o.Summaries...)
	k.Configs = append(k.Configs, o.Configs...)
	k.ConfigNames = append(k.ConfigNames, o.ConfigNames...)
}

// LoadNode reads a node for the eviction preview: the Node, its pods (by
// spec.nodeName), and the kubelet's stats summary and configz (directly,
// or through the node proxy: kubelet_direct.go). A read that fails is
// noted (Kubelet.Unavailable); memory then comes from the metrics API when
// it serves the node.
func (l *Live) LoadNode(ctx context.Context, name string) (*snapshot.Snapshot, error) {
	node, err := l.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	s := &snapshot.Snapshot{ClaimsKnown: true, Nodes: []*corev1.Node{node}}
	sel := fields.OneTermEqualSelector("spec.nodeName", name).String()
	opts := metav1.ListOptions{FieldSelector: sel, Limit: pageSize}
	for {
		list, err := l.Client.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			s.Pods = append(s.Pods, &list.Items[i])
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	if err := l.readKubelet(ctx, node, s); err != nil {
		return nil, err
	}
	if len(s.Kubelet.Summaries) == 0 {
		if mem, ok := l.metricsMemory(ctx, name); ok {
			s.Kubelet.MetricsMemory = mem
		}
	}
	return s, nil
}

// metricsMemory is the node's memory usage (working set) from the metrics
// API, when it is served.
func (l *Live) metricsMemory(ctx context.Context, name string) (int64, bool) {
	data, err := l.Client.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes", name).DoRaw(ctx)
	if err != nil {
		return 0, false
	}
	var m struct {
		Usage map[string]resource.Quantity `json:"usage"`
	}
	if json.Unmarshal(data, &m) != nil {
		return 0, false
	}
	q, ok := m.Usage["memory"]
	return q.Value(), ok
}

// readIfKubeletDoc reads the whole input when its first key marks a kubelet
// document; ok is false (and nothing consumed) otherwise.
func readIfKubeletDoc(name string, data []byte, r io.Reader) (*snapshot.Snapshot, bool, error) {
	display := displayName(name)
	if data == nil {
		f, isFile := r.(*os.File)
		if !isFile {
			return nil, false, nil
		}
		head := make([]byte, 64)
		n, _ := io.ReadFull(f, head)
		if kubeletDocKind(head[:n]) == "" {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, true, &FileError{Name: display, Err: err}
			}
			return nil, false, nil
		}
		rest, err := io.ReadAll(f)
		if err != nil {
			return nil, true, &FileError{Name: display, Err: err}
		}
		data = slices.Concat(head[:n], rest)
	}
	kind := kubeletDocKind(data)
	if kind == "" {
		return nil, false, nil
	}
	s, err := readKubeletDoc(kind, display, data)
	return s, true, err
}
