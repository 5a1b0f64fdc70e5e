// Package oraclegen is the version-independent half of the per-version
// oracles in test/versions/v1_NN: it generates seeded random pod sets as
// plain JSON (so that a module pinned to an old k8s.io/api can use them),
// asks the version's real controller.ActivePodsWithRanks.Less for every
// ordered pair under each gate combination, and writes the answers to
// $ORACLE_DIR/v1.NN.json.gz for test/conformance's TestVersionOracles.
//
// It imports nothing outside the standard library on purpose: each version
// module supplies the version-specific parts (decoding into its own
// corev1.Pod, setting gates with its own featuregatetesting) as callbacks.
package oraclegen
