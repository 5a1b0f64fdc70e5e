// Package packaging tests the release packaging of kubectl scale-preview:
// the goreleaser archives, the krew manifests (plugin.yaml, .krew.yaml) and
// the plugin installed the way krew installs it, run through kubectl's
// plugin mechanism (help, --version, shell completion via
// the completion script kubectl_complete-scale_preview, shipped in each
// archive beside the plugin binary; .cmd on Windows).
//
// Run it with `make packaging-test` (it builds the archives with
// `make release-snapshot` first) or `make packaging-check` (this machine's
// archive only). Environment:
//
//	PACKAGING_SINGLE_TARGET=1 build only this machine's archive (.goreleaser.yaml
//	                          narrowed to one platform; `make packaging-check`); the
//	                          manifests are still validated for every platform
//	PACKAGING_DIST=<dir>      use the archives already in <dir> (a goreleaser dist/)
//	PACKAGING_SKIP_BUILD=1    use <repo>/dist if it holds a build, else skip the
//	                          archive tests (the committed manifests are still checked)
//	PACKAGING_KUBECTL=<path>  the kubectl to run the plugin through; "build" builds
//	                          k8s.io/kubernetes/cmd/kubectl from the module proxy
//	                          (what happens anyway when no kubectl >= 1.26 is on PATH)
//
// The tests that need no build (TestCommittedManifests, TestGoreleaserConfig)
// run in seconds.
package packaging
