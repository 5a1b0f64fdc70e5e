package snapshot

import (
	"encoding/json"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// KubeletDocs are what a node's kubelet serves through the API server's
// node proxy: /stats/summary and /configz.
type KubeletDocs struct {
	Summaries []*statsapi.Summary
	// Configs are configz's "kubeletconfig" objects, undecoded: the model
	// that reads them decodes them.
	Configs []json.RawMessage
	// ConfigNames say where each config came from (a file, "configz").
	ConfigNames []string
	// Unavailable says why a document could not be read live (forbidden,
	// the kubelet unreachable); the figures are then assumed.
	Unavailable []string
	// MetricsMemory is node memory usage from the metrics API, in bytes,
	// read when the summary could not be (0: none).
	MetricsMemory int64
}
