// Package buildinfo says which build of the project is running, from the
// build information the Go toolchain embeds, for `rpca version` and the
// Python package's rpca.__version__ of its library.
package buildinfo

import "runtime/debug"

// Module is the path of the project's main module.
const Module = "github.com/rpca-gd/rpca"

// Version is String of the running binary's build information.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "rpca (no build information)"
	}
	return String(info)
}

// String is "rpca", the version of the project's module (the main module,
// or a dependency when another module such as the Python bridge is
// built), the revision the binary was built from with "(modified)" when
// its tree had changes, the revision's time and the Go version:
// "rpca v1.2.3 go1.26.8", "rpca (devel) 1a2b3c4d5e6f (modified)
// 2026-11-27T00:00:00Z go1.26.8".
func String(info *debug.BuildInfo) string {
	v := "rpca " + info.Main.Version
	if info.Main.Path != Module {
		for _, d := range info.Deps {
			if d.Path == Module {
				v = "rpca " + d.Version
			}
		}
	}
	var rev, at, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev != "" {
		v += " " + rev + modified
	}
	if at != "" {
		v += " " + at
	}
	return v + " " + info.GoVersion
}
