// Package version carries the build's identity. Version and Commit are
// stamped at link time by the Makefile and goreleaser:
//
//	-X github.com/scale-preview/scale-preview/pkg/version.Version=v0.1.0
//	-X github.com/scale-preview/scale-preview/pkg/version.Commit=abc1234
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is the release version (a "v"-prefixed semver tag), "dev" when
// built without ldflags.
var Version = "dev"

// Commit is the short commit hash of the build, "none" when unknown.
var Commit = "none"

// Info is what `kubectl scale-preview --version` shows.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build's identity. When Commit was not stamped it falls
// back to the VCS revision the Go toolchain recorded, if any.
func Get() Info {
	commit := Commit
	if commit == "none" || commit == "" {
		if rev := vcsRevision(); rev != "" {
			commit = rev
		}
	}
	return Info{
		Version:   Version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String is the one-line form, e.g. "v0.1.0 (commit abc1234, go1.26.8, linux/amd64)".
func (i Info) String() string {
	return i.Version + " (commit " + i.Commit + ", " + i.GoVersion + ", " + i.Platform + ")"
}

func vcsRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}
