//go:build !kubeletscheme

package inprocess

import (
	"fmt"
	"testing"

	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
)

var configzReplayed, configzUnrecorded int

// configzDoc replays the document the kubelet's scheme made of this
// configuration (recorded; -tags kubeletscheme makes it live). A case the
// recording lacks (beyond -short's) skips the configz leg; a recording made
// of another configuration fails.
func configzDoc(t *testing.T, i int, kc kubeletconfig.KubeletConfiguration) []byte {
	t.Helper()
	rec, ok := configzRecorded(t)[i]
	if !ok {
		configzUnrecorded++
		return nil
	}
	if rec.Config != configzFingerprint(t, kc) {
		t.Fatalf("case %d: testdata/configz.json.gz was recorded from another configuration: run `make inprocess-configz-update`", i)
	}
	configzReplayed++
	return rec.Doc
}

func configzDone(*testing.T) string {
	return fmt.Sprintf("/configz as the kubelet's scheme serves it: %d recorded documents read, %d cases without one (-tags kubeletscheme for all)", configzReplayed, configzUnrecorded)
}
