package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestString: the project's version as the main module or as a
// dependency, with the revision, its state and time when the build
// recorded them.
func TestString(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-27T00:00:00Z"}}
	for _, c := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "v1.2.3"}}, "rpca v1.2.3 go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: vcs},
			"rpca (devel) 1a2b3c4d5e6f (modified) 2026-11-27T00:00:00Z go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module + "/python/bridge", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "gonum.org/v1/gonum", Version: "v0.17.0"}, {Path: Module, Version: "v0.4.0"}}}, "rpca v0.4.0 go1.26.8"},
	} {
		if got := String(&c.info); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
