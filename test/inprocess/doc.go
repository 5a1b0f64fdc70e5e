// Package inprocess checks the plugin's workload models against the real
// controllers of Kubernetes 1.37 (k8s.io/kubernetes pkg/controller), run
// in-process on a strict fake API: resourceVersion conflicts on update,
// status written only through the status subresource, generation bumped
// on spec changes, bound pods left terminating on delete (no kubelet).
// Scenarios are seeded and each one is repeated many times with varied
// informer start order and API latency, so that the controllers' timing
// varies from run to run.
package inprocess
