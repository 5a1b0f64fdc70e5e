package snapshot

import (
	"encoding/json"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// KubeletDocs are what a node's kubelet serves: /stats/summary and /configz.
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
	// Reads say how each document was read live (or that it came from a file).
	Reads []KubeletRead
}

// KubeletRead is how one kubelet document was read.
type KubeletRead struct {
	// Document is "stats/summary" or "configz".
	Document string `json:"document"`
	// Path: "kubelet" (directly), "node-proxy" (the API server's node
	// proxy), "file" (-f), or "none" (not read: the figures are assumed).
	Path string `json:"path"`
	// Endpoint is the kubelet's host:port, for a direct read.
	Endpoint string `json:"endpoint,omitempty"`
	// InsecureTLS: its serving certificate did not verify and the
	// credentials were sent anyway (--kubelet-insecure-tls).
	InsecureTLS bool `json:"insecureTLS,omitempty"`
}
