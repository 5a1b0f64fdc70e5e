package version

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	oldV, oldC := Version, Commit
	defer func() { Version, Commit = oldV, oldC }()
	Version, Commit = "v1.2.3", "abc1234"

	i := Get()
	if i.Version != "v1.2.3" || i.Commit != "abc1234" {
		t.Fatalf("Get() = %+v", i)
	}
	if i.GoVersion != runtime.Version() || i.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("Get() = %+v", i)
	}
	if s := i.String(); !strings.HasPrefix(s, "v1.2.3 ") || !strings.Contains(s, "abc1234") {
		t.Fatalf("String() = %q", s)
	}
	b, err := json.Marshal(i)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "commit", "goVersion", "platform"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON %s lacks %q", b, k)
		}
	}
}

func TestGetDefaults(t *testing.T) {
	if Version != "dev" {
		t.Skipf("Version stamped as %q", Version)
	}
	if i := Get(); i.Version != "dev" || i.Commit == "" {
		t.Fatalf("Get() = %+v", i)
	}
}
