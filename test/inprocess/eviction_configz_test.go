package inprocess

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"sync"
	"testing"

	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
)

// configzRecord is one /configz document the kubelet's scheme made, and a
// fingerprint of the internal configuration it was made from.
type configzRecord struct {
	Case   int             `json:"case"`
	Config string          `json:"config"`
	Doc    json.RawMessage `json:"doc"`
}

const configzFile = "testdata/configz.json.gz"

func configzFingerprint(t *testing.T, kc kubeletconfig.KubeletConfiguration) string {
	t.Helper()
	b, err := json.Marshal(kc)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

var configzLoad = sync.OnceValues(func() (map[int]configzRecord, error) {
	f, err := os.Open(configzFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var recs []configzRecord
	if err := json.NewDecoder(zr).Decode(&recs); err != nil {
		return nil, err
	}
	m := make(map[int]configzRecord, len(recs))
	for _, r := range recs {
		m[r.Case] = r
	}
	return m, nil
})

func configzRecorded(t *testing.T) map[int]configzRecord {
	t.Helper()
	m, err := configzLoad()
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("%s: %v", configzFile, err)
	}
	return m
}
