//go:build kubeletscheme

package inprocess

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
)

// The kubelet's scheme (with its defaults it links kube-apiserver's option
// packages: a third of this module's compile in make test) makes the
// /configz documents live under this tag (make inprocess-check and
// inprocess-long). Each is compared with its recording in
// testdata/configz.json.gz, which the untagged build reads;
// INPROCESS_CONFIGZ_UPDATE=1 rewrites the recording.

var evictKubeletScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	s, _, err := kubeletscheme.NewSchemeAndCodecs()
	return s, err
})

var configzLive struct {
	made    map[int]configzRecord
	checked int
}

func configzDoc(t *testing.T, i int, kc kubeletconfig.KubeletConfiguration) []byte {
	t.Helper()
	sch, err := evictKubeletScheme()
	if err != nil {
		t.Fatal(err)
	}
	var versioned kubeletconfigv1beta1.KubeletConfiguration
	if err := sch.Convert(&kc, &versioned, nil); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(map[string]any{"kubeletconfig": &versioned})
	if err != nil {
		t.Fatal(err)
	}
	rec := configzRecord{Case: i, Config: configzFingerprint(t, kc), Doc: doc}
	if configzLive.made == nil {
		configzLive.made = map[int]configzRecord{}
	}
	configzLive.made[i] = rec
	if old, ok := configzRecorded(t)[i]; ok && os.Getenv("INPROCESS_CONFIGZ_UPDATE") == "" {
		if old.Config != rec.Config || string(old.Doc) != string(doc) {
			t.Fatalf("case %d: the recorded /configz differs from the kubelet's scheme's:\nrecorded %s\nlive     %s\n(INPROCESS_CONFIGZ_UPDATE=1 rewrites testdata/configz.json.gz)", i, old.Doc, doc)
		}
		configzLive.checked++
	}
	return doc
}

// configzDone writes the recording (-short's cases) when asked to, and
// otherwise says how many recorded documents the live scheme confirmed.
func configzDone(t *testing.T) string {
	t.Helper()
	if os.Getenv("INPROCESS_CONFIGZ_UPDATE") == "" {
		if testing.Short() && configzLive.checked != len(configzRecorded(t)) {
			t.Errorf("%d recorded /configz documents, %d made by this run (INPROCESS_CONFIGZ_UPDATE=1 rewrites them)", len(configzRecorded(t)), configzLive.checked)
		}
		return fmt.Sprintf("/configz from the kubelet's scheme, %d recorded documents equal to it", configzLive.checked)
	}
	if !testing.Short() {
		t.Fatal("INPROCESS_CONFIGZ_UPDATE records the -short run's configurations: add -short")
	}
	writeConfigz(t, configzLive.made)
	return fmt.Sprintf("%d /configz documents recorded", len(configzLive.made))
}

func writeConfigz(t *testing.T, made map[int]configzRecord) {
	t.Helper()
	recs := make([]configzRecord, 0, len(made))
	for _, r := range made {
		recs = append(recs, r)
	}
	sort.Slice(recs, func(a, b int) bool { return recs[a].Case < recs[b].Case })
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	if err := enc.Encode(recs); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.FromSlash(configzFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
