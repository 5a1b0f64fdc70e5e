// Package eviction predicts the kubelet's node-pressure eviction: from a
// node, its pods, the kubelet's stats summary and its configuration, which
// thresholds are met, which pods the eviction manager kills, in which order,
// with which grace period, and which rule of its ranking decided each
// comparison. It mirrors k8s.io/kubernetes pkg/kubelet/eviction
// (eviction_manager.go synchronize, helpers.go) version by version through
// rules.KubeletRules; docs/eviction.md explains the rules.
//
// Everything here is pure: no clock, no client, no globals written.
package eviction
