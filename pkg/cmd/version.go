package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/version"
)

// versionInfo is --version's JSON document.
type versionInfo struct {
	Version         string   `json:"version"`
	Commit          string   `json:"commit"`
	GoVersion       string   `json:"goVersion"`
	Platform        string   `json:"platform"`
	KubernetesRules []string `json:"kubernetesRules"`
}

func printVersion(w io.Writer, format string) error {
	v := currentVersion()
	v.KubernetesRules = rules.Supported()
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintf(w, "scale-preview %s (commit %s, %s, %s)\nKubernetes rules: 1.%d to 1.%d\n", v.Version, v.Commit, v.GoVersion, v.Platform, rules.Oldest, rules.Newest)
	return err
}

func currentVersion() versionInfo {
	i := version.Get()
	return versionInfo{Version: i.Version, Commit: i.Commit, GoVersion: i.GoVersion, Platform: i.Platform}
}
